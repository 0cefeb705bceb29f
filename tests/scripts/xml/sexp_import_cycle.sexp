;; error: VALIDATION_ERROR import cycle a.sexp b.sexp
(import "templates/modules/a.sexp")

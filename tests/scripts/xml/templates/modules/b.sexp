(import "a.sexp")
(define b-value 2)

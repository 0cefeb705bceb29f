; A module that imports the module that imports it.
(import "b.sexp")
(define a-value 1)

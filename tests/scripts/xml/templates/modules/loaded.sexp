(define loaded-value (* 6 7))
(println "loading loaded.sexp")
loaded-value

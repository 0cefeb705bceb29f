;; stdout: before
;; error: EVAL_ERROR unbound symbol: undefined-function

(println "before")
(prn (undefined-function 1))

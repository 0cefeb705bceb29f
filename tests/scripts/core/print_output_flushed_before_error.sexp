;; stdout: first
;; stdout: partial
;; error: EVAL_ERROR car

(println "first")
(println "partial")
(car 1 2)

;; stdout: ("RESOURCE_EXHAUSTION" "append: a list of more than 16777216 elements")
;; stdout: still running
(define (double xs) (double (append xs xs)))
(prn (try (double (range 1000)) (catch e (list e.type e.message))))
(println "still running")

;; stdout: before
;; error: RESOURCE_EXHAUSTION recursion deeper than 10000 frames

(define (f n) (+ 1 (f n)))
(println "before")
(f 0)

;; stdout: "RESOURCE_EXHAUSTION"
;; stdout: "depth" 10000
;; stdout: 12502500
;; stdout: "RESOURCE_EXHAUSTION"
(define (f n) (+ 1 (f (+ n 1))))
(prn (try (f 0) (catch e e.type)))
(define e (try (f 0) (catch e e)))
(prn e.details.resource e.details.limit)
(define (sum n) (if (= n 0) 0 (+ n (sum (- n 1)))))
(prn (sum 5000))
(prn (try (f 0) (catch e e.type)))

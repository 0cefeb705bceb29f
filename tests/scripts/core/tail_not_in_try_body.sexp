;; stdout: done
;; stdout: "RESOURCE_EXHAUSTION"
(define (loop n) (if (= n 0) 'done (try (loop (- n 1)) (catch e e.type))))
(prn (loop 100))
(prn (loop 20000))

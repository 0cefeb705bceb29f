;; stdout: "RESOURCE_EXHAUSTION"
;; stdout: alive
(define (f n) (car (map (fn (x) (+ 1 (f x))) (list n))))
(prn (try (f 0) (catch e e.type)))
(prn 'alive)

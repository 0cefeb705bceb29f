;; stdout: 500000500000
(define (make-loop) (fn (n acc) (if (= n 0) acc ((make-loop) (- n 1) (+ acc n)))))
(prn ((make-loop) 1000000 0))

;; stdout: 9000
(define (depth n) (if (= n 0) 0 (+ 1 (depth (- n 1)))))
(prn (depth 9000))

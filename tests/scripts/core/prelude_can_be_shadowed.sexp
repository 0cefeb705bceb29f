;; stdout: 101
;; stdout: (101)
(define (inc n) (+ n 100))
(prn (inc 1))
(prn (map inc '(1)))

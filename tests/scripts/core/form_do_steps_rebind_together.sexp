;; stdout: (2 1)
;; stdout: 55
;; stdout: 5
(prn (do ((a 1 b) (b 2 a) (n 0 (+ n 1))) ((= n 3) (list a b))))
(prn (do ((fib-a 0 fib-b) (fib-b 1 (+ fib-a fib-b)) (n 0 (+ n 1))) ((= n 10) fib-a)))
(prn (do ((x 5)) (true x)))

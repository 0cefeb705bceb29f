;; stdout: 6
(prn (do ((i 0 (+ i 1))) ((>= i 5) i) (set! i (+ i 1))))

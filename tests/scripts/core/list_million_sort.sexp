;; stdout: 0 500000 999999 1000000
(define xs (reverse (range 1000000)))
(define s (sort xs))
(prn (car s) (nth s 500000) (last s) (length s))

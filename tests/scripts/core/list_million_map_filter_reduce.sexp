;; stdout: 1000000
;; stdout: 500000
;; stdout: 499999500000
(define xs (range 1000000))
(prn (length (map inc xs)))
(prn (length (filter even? xs)))
(prn (reduce + 0 xs))

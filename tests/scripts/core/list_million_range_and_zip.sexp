;; stdout: 1000000 0 999999
;; stdout: (999999 999999)
;; stdout: 999999 1
(define xs (range 1000000))
(prn (length xs) (car xs) (last xs))
(prn (last (zip xs xs)))
(prn (length (take xs 999999)) (length (drop xs 999999)))

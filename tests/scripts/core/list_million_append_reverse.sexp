;; stdout: 2000000 0 999999
;; stdout: 999999 0
(define xs (range 1000000))
(define both (append xs xs))
(prn (length both) (nth both 1000000) (last both))
(define r (reverse xs))
(prn (car r) (last r))

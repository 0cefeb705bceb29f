;; stdout: 3 -3 -3 3
;; stdout: 1 -1 1 -1
;; stdout: 1 1 -1 -1
;; stdout: 0 0 0
(prn (quotient 7 2) (quotient -7 2) (quotient 7 -2) (quotient -7 -2))
(prn (remainder 7 2) (remainder -7 2) (remainder 7 -2) (remainder -7 -2))
(prn (modulo 7 2) (modulo -7 2) (modulo 7 -2) (modulo -7 -2))
(prn (modulo 6 3) (modulo -6 3) (remainder -6 3))

;; stdout: -1.0 3.0 -3.0
;; stdout: 3.0 -1.0 1.0
;; stdout: 1.5 -0.5
;; error: EVAL_ERROR division by zero
(prn (remainder -13 -4.0) (modulo -13 4.0) (quotient 13.0 -4))
(prn (quotient 7.0 2) (remainder -7.0 2) (modulo -7 2.0))
(prn (remainder 5.5 2) (modulo 5.5 -2))
(quotient 1 0.0)

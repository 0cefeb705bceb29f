;; stdout: true true false
;; stdout: true true false false
;; stdout: true false
;; stdout: true true false
;; stdout: true false true true true
;; stdout: true false true false
(prn (number? 1) (number? 1.5) (number? "1"))
(prn (integer? 2) (integer? 2.0) (integer? 2.5) (integer? "2"))
(prn (float? 2.0) (float? 2))
(prn (zero? 0) (zero? 0.0) (zero? 1))
(prn (even? 4) (even? -3) (odd? 3) (odd? -3) (even? 0))
(prn (positive? 3) (positive? 0) (negative? -0.5) (negative? 0))

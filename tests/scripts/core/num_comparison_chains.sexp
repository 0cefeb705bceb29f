;; stdout: true false true true true false
;; stdout: true true true
(prn (< 1 2 3) (< 1 3 2) (> 3 2 1) (<= 1 1 2) (>= 2 2 1) (>= 1 2))
(prn (< 1 1.5) (> 2.5 2) (< 1))

;; stdout: 1 3 5 -1
;; stdout: 1.0 2.0
(prn (min 3 1 2) (max 3 1 2) (min 5) (max -1 -2))
(prn (min 1 2.0) (max 1 2.0))

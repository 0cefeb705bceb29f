;; stdout: 3 3 2.5 0
(prn (abs -3) (abs 3) (abs -2.5) (abs 0))

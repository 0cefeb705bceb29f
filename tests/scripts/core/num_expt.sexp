;; stdout: 1024 1 1 -8
;; stdout: 0.5 8.0 2.0
(prn (expt 2 10) (expt 2 0) (expt 0 0) (expt -2 3))
(prn (expt 2 -1) (expt 2.0 3) (expt 4 0.5))

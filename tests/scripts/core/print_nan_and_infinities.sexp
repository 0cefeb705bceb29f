;; stdout: NaN
;; stdout: inf
;; stdout: -inf
;; stdout: (inf)
(prn (/ 0.0 0.0))
(prn (/ 1.0 0))
(prn (/ -1.0 0))
(println (list (/ 1 0.0)))

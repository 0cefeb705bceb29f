;; stdout: 3.5
;; stdout: -0.25
;; stdout: 1000.0
;; stdout: 0.5
;; stdout: 0.0025
(prn 3.5)
(prn -0.25)
(prn 1e3)
(prn .5)
(prn 2.5e-3)

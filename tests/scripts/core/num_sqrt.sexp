;; stdout: 4 0 1.4142135623730951 1.5 NaN
(prn (sqrt 16) (sqrt 0) (sqrt 2) (sqrt 2.25) (sqrt -1))

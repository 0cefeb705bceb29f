;; stdout: 2 0 2.5
(prn (inc 1) (dec 1) (inc 1.5))

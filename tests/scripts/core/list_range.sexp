;; stdout: (0 1 2) (1 2 3) (0 3 6 9) (5 3 1)
;; stdout: () () () ()
(prn (range 3) (range 1 4) (range 0 10 3) (range 5 0 -2))
(prn (range 0) (range -2) (range 3 3) (range 3 1))

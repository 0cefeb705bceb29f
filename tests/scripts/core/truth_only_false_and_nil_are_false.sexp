;; stdout: (yes yes yes yes no no yes yes)
(prn (map (fn (v) (if v 'yes 'no)) [0 "" (list) {} false nil 0.0 'x]))

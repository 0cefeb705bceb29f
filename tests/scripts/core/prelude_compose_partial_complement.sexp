;; stdout: 3 5 8
;; stdout: 13 (a b c)
;; stdout: false (false true)
;; stdout: (1 2) "12"
(prn ((compose inc inc) 1) ((compose) 5) ((compose (fn (x) (* x 2)) inc) 3))
(prn ((partial + 10) 1 2) ((partial list 'a 'b) 'c))
(prn ((complement odd?) 3) (map (complement nil?) [nil 1]))
(prn ((compose list) 1 2) ((compose str (partial * 2) +) 1 2 3))

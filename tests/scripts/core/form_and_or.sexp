;; stdout: true false 3 false nil
;; stdout: nil 2 0
(prn (and) (or) (and 1 2 3) (and 1 false 3) (and nil 1))
(prn (or false nil) (or false 2 3) (or nil false 0))

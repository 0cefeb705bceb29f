;; stdout: (2 4) 4 nil 2
(prn (remove odd? '(1 2 3 4)) (find even? '(1 3 4 6)) (find even? '(1 3)) (count odd? '(1 2 3)))

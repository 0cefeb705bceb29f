;; stdout: (3 2 1) () (3 (1 2))
(prn (reverse '(1 2 3)) (reverse '()) (reverse '((1 2) 3)))

;; stdout: (1 2 3) () (1 2) (1) (())
(prn (list 1 2 3) (list) (cons 1 (list 2)) (cons 1 nil) (cons (list) (list)))

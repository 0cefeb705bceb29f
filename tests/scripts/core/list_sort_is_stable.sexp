;; stdout: ((0 b) (0 d) (1 a) (1 c) (1 e))
(define pairs '((1 a) (0 b) (1 c) (0 d) (1 e)))
(prn (sort pairs (fn (x y) (< (car x) (car y)))))

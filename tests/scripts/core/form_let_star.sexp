;; stdout: (1 2 20)
;; stdout: 2
(prn (let* ((x 1) (y (+ x 1)) (z (* y 10))) (list x y z)))
(prn (let* ((x 1) (x (+ x 1))) x))

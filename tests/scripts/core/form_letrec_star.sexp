;; stdout: 20
(prn (letrec* ((a 1) (b (+ a 1)) (f (fn () (* b 10)))) (f)))

;; stdout: 2
(define m {"a" [1 2]})
(prn (eval (read "m.a[1]")))

;; stdout: (a (quasiquote (b (unquote (c 3)))))
(prn `(a `(b ,(c ,(+ 1 2)))))

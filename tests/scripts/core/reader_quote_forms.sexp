;; stdout: (quote a)
;; stdout: (quasiquote (a (unquote b) (unquote-splicing c)))
(prn ''a)
(prn '`(a ,b ,@c))

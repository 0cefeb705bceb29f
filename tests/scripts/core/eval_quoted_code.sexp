;; stdout: 3
;; stdout: 42
;; stdout: 5 "s" sym
;; stdout: 99
(prn (eval '(+ 1 2)))
(prn (eval (list '* 6 7)))
(prn (eval 5) (eval "s") (eval ''sym))
(eval '(define from-eval 99))
(prn from-eval)

;; stdout: 2 3 2 (3 4) 3 a
(define xs '(1 2 3 4))
(prn (second xs) (third xs) (cadr xs) (cddr xs) (caddr xs) (caar '((a) b)))

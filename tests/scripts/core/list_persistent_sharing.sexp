;; stdout: (1 2 3) (9 2 3) (2 3)
;; stdout: true
(define base '(2 3))
(define a (cons 1 base))
(define b (cons 9 base))
(prn a b base)
(prn (eq? (cdr a) (cdr b)))

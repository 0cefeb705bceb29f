;; stdout: 2
;; stdout: new
(define x 1)
(define x (+ x 1))
(prn x)
(define (f) 'old)
(define (g) (f))
(define (f) 'new)
(prn (g))

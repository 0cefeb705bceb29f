;; stdout: 1
;; stdout: false
;; stdout: 11
(prn (or 1 (error "not evaluated")))
(prn (and false (error "not evaluated")))
(define n 0)
(or (begin (set! n (+ n 1)) false) (begin (set! n (+ n 10)) true) (set! n 1000))
(prn n)

;; stdout: x
;; stdout: f
;; stdout: nil
(prn (define x 1))
(prn (define (f) 1))
(define y)
(prn y)

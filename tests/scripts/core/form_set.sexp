;; stdout: 2
;; stdout: 12
;; stdout: 5
;; stdout: nil
(define x 1)
(set! x 2)
(prn x)
(define (bump) (set! x (+ x 10)))
(bump)
(prn x)
(prn (let ((y 1)) (set! y 5) y))
(prn (set! x 0))

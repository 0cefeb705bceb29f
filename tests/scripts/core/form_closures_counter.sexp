;; stdout: 3 1
(define (make-counter)
  (let ((n 0))
    (fn () (set! n (+ n 1)) n)))
(define c1 (make-counter))
(define c2 (make-counter))
(c1) (c1)
(prn (c1) (c2))

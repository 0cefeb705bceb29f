;; stdout: done
(define (loop n) (begin (define x n) (if (= x 0) 'done (begin 1 (loop (- n 1))))))
(prn (loop 1000000))

;; stdout: done
(define (loop n) (cond ((= n 0) 'done) ((- n 1) => loop)))
(prn (loop 1000000))

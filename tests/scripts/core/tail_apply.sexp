;; stdout: done
(define (loop n) (if (= n 0) 'done (apply loop (list (- n 1)))))
(prn (loop 1000000))

;; stdout: done
(define (loop n)
  (case (modulo n 3)
    ((0) (if (= n 0) 'done (loop (- n 1))))
    ((1) (loop (- n 1)))
    (else (loop (- n 1)))))
(prn (loop 1000000))

;; stdout: 1500000
(define (loop n acc)
  (cond ((= n 0) acc)
        ((even? n) (loop (- n 1) (+ acc 2)))
        (else (loop (- n 1) (+ acc 1)))))
(prn (loop 1000000 0))

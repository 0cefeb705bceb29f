;; stdout: done
(define (count-down n) (if (= n 0) 'done (count-down (- n 1))))
(prn (count-down 1000000))

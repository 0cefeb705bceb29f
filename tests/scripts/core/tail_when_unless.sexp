;; stdout: nil nil
(define (up n) (when (< n 1000000) (up (+ n 1))))
(define (down n) (unless (= n 0) (down (- n 1))))
(prn (up 0) (down 1000000))

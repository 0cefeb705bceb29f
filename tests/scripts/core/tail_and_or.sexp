;; stdout: true true
(define (all-positive n) (and (>= n 0) (or (= n 0) (all-positive (- n 1)))))
(define (find-zero n) (or (= n 0) (and true (find-zero (- n 1)))))
(prn (all-positive 1000000) (find-zero 1000000))

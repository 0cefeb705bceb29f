;; stdout: true true
(define (ev? n) (if (= n 0) true (od? (- n 1))))
(define (od? n) (if (= n 0) false (ev? (- n 1))))
(prn (ev? 1000000) (od? 1000001))

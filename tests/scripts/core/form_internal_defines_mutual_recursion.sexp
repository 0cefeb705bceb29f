;; stdout: even odd
(define (parity n)
  (define (ev? n) (if (= n 0) true (od? (- n 1))))
  (define (od? n) (if (= n 0) false (ev? (- n 1))))
  (if (ev? n) 'even 'odd))
(prn (parity 10) (parity 7))

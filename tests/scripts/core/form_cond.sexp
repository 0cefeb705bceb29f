;; stdout: (negative zero small big)
;; stdout: nil
;; stdout: 3
(define (classify n)
  (cond ((< n 0) 'negative)
        ((= n 0) 'zero)
        ((< n 10) 'small)
        (else 'big)))
(prn (map classify '(-5 0 3 99)))
(prn (cond (false 1)))
(prn (cond (false 1) (else 2 3)))

;; stdout: (small letter string other other)
;; stdout: nil
;; stdout: really-two
(define (kind x)
  (case x
    ((1 2 3) 'small)
    ((a b) 'letter)
    (("s") 'string)
    (else 'other)))
(prn (map kind '(2 b "s" 99 :k)))
(prn (case 5 ((1) 'one)))
(prn (case (+ 1 1) ((2) 'two 'really-two)))

;; stdout: true false true 999999
(define a (range 1000000))
(define b (map identity a))
(prn (equal? a b) (eq? a b) (contains? a 999999) (index-of a 999999))

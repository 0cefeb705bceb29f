;; stdout: 3 nil
;; stdout: 3
(prn (begin 1 2 3) (begin))
(begin (define b1 1) (define b2 2))
(prn (+ b1 b2))

;; stdout: 20
;; stdout: ((10 20) (1))
(define xs [10 20])
(prn xs[1])
(prn (list xs [1]))

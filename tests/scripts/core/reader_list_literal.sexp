;; stdout: (1 2 10)
;; stdout: ()
;; stdout: true
(define x 10)
(prn [1 (+ 1 1) x])
(prn [])
(prn (equal? [1 2] (list 1 2)))

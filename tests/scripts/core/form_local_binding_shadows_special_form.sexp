;; stdout: (1)
;; stdout: shadowed
;; stdout: (1 2)
(define (f if) (list if))
(prn (f 1))
(prn (let ((list (fn args 'shadowed))) (list 1 2)))
(prn [1 2])

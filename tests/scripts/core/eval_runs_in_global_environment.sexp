;; stdout: global
(define x 'global)
(prn (let ((x 'local)) (eval 'x)))

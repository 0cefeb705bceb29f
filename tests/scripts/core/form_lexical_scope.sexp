;; stdout: global
;; stdout: local
(define x 'global)
(define (show) x)
(prn (let ((x 'local)) (show)))
(prn (let ((x 'local)) x))

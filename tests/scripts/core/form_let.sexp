;; stdout: 3
;; stdout: 10
;; stdout: 5
;; stdout: 3
(prn (let ((x 1) (y 2)) (+ x y)))
(define x 10)
(prn (let ((x 1) (y x)) y))
(prn (let () 5))
(prn (let ((a 1)) (define b 2) (+ a b)))

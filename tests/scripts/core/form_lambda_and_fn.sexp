;; stdout: 3
;; stdout: 16
;; stdout: none
;; stdout: (1 2 3)
;; stdout: (2 3)
;; stdout: (2 1)
(prn ((lambda (x y) (+ x y)) 1 2))
(prn ((fn (x) (* x x)) 4))
(prn ((fn () 'none)))
(prn ((fn args args) 1 2 3))
(prn ((fn (a . more) more) 1 2 3))
(prn ((fn [a b] (list b a)) 1 2))

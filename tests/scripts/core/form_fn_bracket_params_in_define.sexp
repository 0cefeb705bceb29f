;; stdout: 81 3
;; stdout: 7
(define g (fn [a] (+ a 78)))
(define h (lambda [a b] (+ a b)))
(prn (g 3) (h 1 2))
(define k (fn [a b] (* a b)))
(prn ((fn [x] (+ x (k 2 2))) 3))

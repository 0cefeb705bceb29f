;; stdout: 6 11
;; stdout: (1 2 3)
(define (adder n) (fn (x) (+ x n)))
(define add5 (adder 5))
(prn (add5 1) ((adder 10) 1))
(define fs (map (fn (i) (fn () i)) '(1 2 3)))
(prn (map (fn (f) (f)) fs))

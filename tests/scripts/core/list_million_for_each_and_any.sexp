;; stdout: 499999500000
;; stdout: true true
(define total 0)
(for-each (fn (x) (set! total (+ total x))) (range 1000000))
(prn total)
(prn (any? (fn (x) (= x 999999)) (range 1000000)) (every? number? (range 1000000)))

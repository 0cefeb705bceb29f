;; stdout: true false false false
;; stdout: true true true false
;; stdout: true false true
(prn (equal? [1 {"a" [2]}] [1 {"a" [2]}]) (equal? [1] [1 2]) (equal? 'a "a") (equal? :a 'a))
(prn (eq? 'a 'a) (eq? car car) (eq? 1 1) (eq? [1] [1]))
(define f (fn (x) x))
(prn (eq? f f) (equal? f (fn (x) x)) (equal? f f))

; Benchmark: higher-order code with closures. 300 rounds, each maps a composed closure
; (an adder made for the round after a doubler) over a 1,000-element list and folds it
; with a lambda: 900,000 closure calls under `map` and 300,000 from the fold.
;   tasklisp run benches/programs/closures.sexp     (prints 345450000; closures.scm is
;   the same program in portable Scheme, for the peers)
(define (fold f acc l) (if (null? l) acc (fold f (f acc (car l)) (cdr l))))
(define (make-adder k) (lambda (x) (+ x k)))
(define (compose f g) (lambda (x) (f (g x))))
(define (build n acc) (if (= n 0) acc (build (- n 1) (cons n acc))))
(define xs (build 1000 '()))
(define (rounds i total)
  (if (= i 0)
      total
      (rounds (- i 1)
              (+ total
                 (fold (lambda (acc x) (+ acc x))
                       0
                       (map (compose (make-adder i) (lambda (x) (* x 2))) xs))))))
(prn (rounds 300 0))

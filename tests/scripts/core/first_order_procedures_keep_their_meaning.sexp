;; stdout: 7
;; stdout: (3 3)
;; stdout: true
;; stdout: "done"
;; stdout: "+: expected a number, got a string \"a\""
;; stdout: 8
;; stdout: 6
;; stdout: "replaced"
;; stdout: (0 1 2)
;; stdout: 3 6
;; stdout: "unbound symbol: h"
;; stdout: 1 false 20 false
;; stdout: 1.5 2.0
;; stdout: "integer overflow"
;; stdout: "arity: expected 2 arguments, got 1"
;; stdout: 5000
;; stdout: "recursion deeper than 10000 frames"
;; stdout: "lt" "ge"
;; Procedures whose body only reads its parameters, branches and calls: what a faster
;; path for them must keep (a task inheriting the caller's context, tail calls between
;; them and other procedures, rebinding, errors, the frame limit).
; a task inheriting the caller's context reads and assigns its variables
(deftask bump () (set! n (+ n 1)))
(define (twice n) (begin (bump) (bump) n))
(prn (twice 5))
(deftask peek () n)
(define (seen n) (list (get (peek) "parsedContent") n))
(prn (seen 3))
; tail calls between such procedures, and with others, take constant space
(define (ev? n) (if (= n 0) true (od? (- n 1))))
(define (od? n) (if (= n 0) false (ev? (- n 1))))
(prn (ev? 1000000))
(define (ping n) (if (= n 0) "done" (pong (- n 1))))
(define (pong n) (let ((m n)) (ping m)))
(prn (ping 1000000))
; errors keep their messages
(define (add-a n) (+ n "a"))
(prn (try (add-a 1) (catch e e.message)))
; a rebound builtin and a redefined procedure are seen at once
(define (dbl n) (* n 2))
(prn (dbl 4))
(define * (fn (a b) (+ a b)))
(prn (dbl 4))
(define (redefine!) (set! g (fn (n) "replaced")))
(define (g n) (if (= n 0) 0 (begin (redefine!) (g (- n 1)))))
(prn (g 5))
; handed to builtins that call procedures
(prn (map (fn (x) (- x 1)) '(1 2 3)))
(define (sum a b) (+ a b))
(prn (apply sum '(1 2)) (reduce sum 0 '(1 2 3)))
(define (f x) (g2 x))
(define (g2 x) (h x))
(prn (try (f 1) (catch e e.message)))
(define (k a b) (and (< a b) (or (= a 0) (> b 10)) (begin a b)))
(prn (k 0 1) (k 1 0) (k 1 20) (k 1 2))
(define (fl x) (+ x 0.5))
(prn (fl 1) (fl 1.5))
(define (big n) (* n n))
(prn (try (big 9223372036854775807) (catch e e.message)))
(define (arity a b) a)
(define (call-arity) (arity 1))
(prn (try (call-arity) (catch e e.message)))
; deep recursion meets the frame limit
(define (deep n) (if (= n 0) 0 (+ 1 (deep (- n 1)))))
(prn (deep 5000))
(prn (try (deep 100000) (catch e e.message)))
(define (notnot a b) (if (not (< a b)) "ge" "lt"))
(prn (notnot 1 2) (notnot 2 1))

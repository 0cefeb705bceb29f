;; stdout: 100000
;; stdout: 4
;; stdout: 3
; a program's own `count` (a builtin's name) still makes tail calls; calls of it in other
; positions reach it too
(define (count k n) (if (= k n) k (count (+ k 1) n)))
(prn (count 0 100000))
(define (f x) (+ 1 (count x x)))
(prn (f 3))
(define (length xs) (if (null? xs) 0 (+ 1 (length (cdr xs)))))
(prn (length '(a b c)))

;; stdout: 9
;; stdout: 107
;; stdout: true 2 7
;; stdout: 103
;; stdout: 102
;; stdout: 4
;; Redefining a builtin is seen by every call of its name, code analysed before the
;; redefinition included; calls of the other builtins go on as before.
(define (total xs) (+ (count even? xs) (length xs) (max 1 2 3)))
(prn (total '(1 2 3 4)))
(define (count f xs) 100)
(prn (total '(1 2 3 4)))
(prn (< 1 2) (- 5 3) (car '(7)))
(define (max a b c) 0)
(prn (total '(1 2 3)))
(define length (fn (xs) 2))
(prn (total '(1 2 3)))
(define (sum-to n acc) (if (= n 0) acc (sum-to (- n 1) (+ acc n))))
(prn (sum-to 2 1))

;; stdout: 7
;; stdout: 7
;; stdout: 42
;; stdout: 3
;; The forms of a top-level `begin` are top-level forms, each analysed after the one
;; before it ran: a macro defined in it, or a redefinition of `unless` or `cond`, takes
;; effect for the forms after it (they were analysed with the old meaning, silently).
(begin
  (defmacro unless (pred a b) `(if ,pred ,b ,a))
  (prn (unless false 7 8)))
(begin (defmacro twice-of (x) `(* 2 ,x)) (prn (- (twice-of 4) 1)))
(begin (define (cond x) (* 2 x)) (begin (prn (cond 21))))
(prn (begin 1 (begin 2 3)))

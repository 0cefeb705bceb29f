;; stdout: 8 13
;; stdout: 12 14
;; stdout: nil
;; An error with no place of its own (the depth limit) takes the place of the builtin call
;; whose operand raised it; arithmetic lets it through to the call around it.
(define (deep n) (+ 1 (deep n)))
(define e (try
            (prn (deep 0))
            (catch err err)))
(prn e.location.line e.location.column)
(define e2 (try
             (cons 1 (deep 0))
             (catch err err)))
(prn e2.location.line e2.location.column)
(define e3 (try
             (- 1 (deep 0))
             (catch err err)))
(prn e3.location)

;; stdout: #<procedure named>
;; stdout: #<procedure>
;; stdout: #<builtin +>
;; stdout: #<procedure alias>
;; stdout: #<builtin car>
(define (named x) x)
(prn named)
(prn (fn (x) x))
(prn +)
(define alias (lambda (y) y))
(prn alias)
(println car)

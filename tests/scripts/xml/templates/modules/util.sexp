; A .sexp module: its definitions and tasks, namespaced by `:as`.
(define greeting "Hello")
(define (shout s) (string-upcase s))
(define (greet-loudly name) (shout (str greeting ", " name)))
(deftask welcome (name) :prompt "Welcome, {{name}}")
(define loaded-times 1)

;; error: SYNTAX_ERROR `unquote` (`,` or `,@`) outside a quasiquote

(define x 1)
(prn ,x)

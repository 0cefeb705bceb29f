;; error: SYNTAX_ERROR `,@` splices into the list around it
(define L '(1 2))
`{"a" ,@L}

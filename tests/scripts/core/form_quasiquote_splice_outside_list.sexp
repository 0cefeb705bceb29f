;; error: SYNTAX_ERROR `,@` splices into the list around it, and there is none here: write `,` to insert the value itself
;; stdout: (0 1 2)
(define L '(1 2))
(prn `(0 ,@L))
(prn `,@L)

;; error: SYNTAX_ERROR else must be the last cond clause

(cond (else 1) (true 2))

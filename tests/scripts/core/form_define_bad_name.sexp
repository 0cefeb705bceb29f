;; error: SYNTAX_ERROR define needs a name

(define 5 1)

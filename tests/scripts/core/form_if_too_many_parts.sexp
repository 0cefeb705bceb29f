;; error: SYNTAX_ERROR (if test then else?)

(if true 1 2 3)

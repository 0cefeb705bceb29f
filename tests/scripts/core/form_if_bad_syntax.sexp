;; error: SYNTAX_ERROR (if test then else?)

(if)

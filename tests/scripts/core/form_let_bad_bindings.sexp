;; error: SYNTAX_ERROR a binding

(let (1 2) 3)

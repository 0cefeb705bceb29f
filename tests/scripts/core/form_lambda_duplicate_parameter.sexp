;; error: SYNTAX_ERROR duplicate parameter

(fn (a a) a)

;; error: SYNTAX_ERROR expected (expect= actual expected)
(expect= 1)

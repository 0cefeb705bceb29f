;; error: SYNTAX_ERROR `if` is a special form and cannot be redefined (of the special forms, only when, unless, cond, case and do can be)
;; stdout: 2
(prn (if true 2 3))
(define if 3)
(prn "not reached")

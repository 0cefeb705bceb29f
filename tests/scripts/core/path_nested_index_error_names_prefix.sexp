;; error: EVAL_ERROR invalid array access: m.a.list[4] (length 1)

(define m {"a" {"list" [1]}})
m.a.list[4]

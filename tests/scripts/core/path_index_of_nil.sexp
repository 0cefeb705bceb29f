;; error: EVAL_ERROR cannot access property of nil: a.b[0] (a.b is nil)

(define a {"b" nil})
a.b[0]

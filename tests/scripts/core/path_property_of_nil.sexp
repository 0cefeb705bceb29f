;; error: EVAL_ERROR cannot access property of nil: a.b.c (a.b is nil)

(define a {"b" nil})
a.b.c

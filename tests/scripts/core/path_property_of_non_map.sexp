;; error: EVAL_ERROR cannot apply a property access to an integer: a.b.c (a.b is an integer)

(define a {"b" 5})
a.b.c

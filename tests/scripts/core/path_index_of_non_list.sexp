;; error: EVAL_ERROR cannot apply an index to a string: a.b[0] (a.b is a string)

(define a {"b" "text"})
a.b[0]

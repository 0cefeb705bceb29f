;; error: EVAL_ERROR b is used before its definition

(letrec ((a b) (b 1)) a)

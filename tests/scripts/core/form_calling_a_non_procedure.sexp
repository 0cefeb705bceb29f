;; error: EVAL_ERROR not a procedure: 5


(5 1 2)

;; error: EVAL_ERROR not a procedure: 5 (an integer)

(5 1 2)

;; error: EVAL_ERROR <: expected

(sort '(1 "a"))

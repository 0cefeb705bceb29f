;; error: EVAL_ERROR <: expected

(< 1 "a")

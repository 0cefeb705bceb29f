;; error: EVAL_ERROR step must not be zero

(range 0 10 0)

;; error: EVAL_ERROR even? integer

(even? 1.5)

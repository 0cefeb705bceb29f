;; error: EVAL_ERROR get: cannot look up "a" in an integer

(get 5 "a")

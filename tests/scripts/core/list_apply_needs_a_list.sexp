;; error: EVAL_ERROR apply: expected a list

(apply + 1 2)

;; error: EVAL_ERROR length: expected a list, string or map

(length 5)

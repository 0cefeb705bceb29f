;; error: EVAL_ERROR empty?

(empty? 0)

;; error: EVAL_ERROR +: expected a number, got a string

(+ 1 "2")

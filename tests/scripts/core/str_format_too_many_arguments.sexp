;; error: EVAL_ERROR format: more arguments than {}

(format "{}" 1 2)

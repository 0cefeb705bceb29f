;; error: EVAL_ERROR format: more {} than arguments

(format "{} {}" 1)

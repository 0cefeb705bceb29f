;; error: EVAL_ERROR fail: expected a reason

(fail 5 "m")

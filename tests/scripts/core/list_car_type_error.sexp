;; error: EVAL_ERROR car: expected a list, got a string

(car "abc")

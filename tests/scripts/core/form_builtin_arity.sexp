;; error: EVAL_ERROR car: expected 1 argument, got 2

(car '(1) '(2))

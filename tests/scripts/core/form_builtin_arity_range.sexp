;; error: EVAL_ERROR substring: expected 2 to 3 arguments, got 1

(substring "a")

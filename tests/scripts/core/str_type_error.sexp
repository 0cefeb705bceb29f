;; error: EVAL_ERROR string-length: expected a string, got an integer 5

(string-length 5)

;; error: EVAL_ERROR map: expected a procedure

(map 5 '(1))

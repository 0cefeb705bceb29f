;; error: EVAL_ERROR cons: expected a list, got an integer

(cons 1 2)

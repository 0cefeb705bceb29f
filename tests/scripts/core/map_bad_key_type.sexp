;; error: EVAL_ERROR assoc: expected a string or keyword key

(assoc {} 1 2)

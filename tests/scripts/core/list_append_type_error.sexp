;; error: EVAL_ERROR append: expected a list

(append '(1) 2)

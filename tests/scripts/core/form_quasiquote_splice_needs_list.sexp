;; error: EVAL_ERROR append: expected a list

`(1 ,@5)

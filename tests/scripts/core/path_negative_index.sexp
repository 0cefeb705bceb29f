;; error: EVAL_ERROR invalid array access: xs[-1] (length 2)

(define xs [1 2])
xs[-1]

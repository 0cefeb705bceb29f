;; stdout: 2
;; error: EVAL_ERROR invalid array access: xs[3] (length 2)

(define xs [1 2])
(prn xs[1])
(prn xs[3])

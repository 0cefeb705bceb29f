;; error: EVAL_ERROR two: expected 2 arguments, got 1

(define (two a b) a)
(two 1)

;; error: EVAL_ERROR f: expected at least 1 argument, got 0

(define (f a . r) a)
(f)

;; error: SYNTAX_ERROR `lambda` is a special form and cannot be redefined
(define (lambda x) x)

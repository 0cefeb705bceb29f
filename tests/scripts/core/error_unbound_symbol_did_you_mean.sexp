;; error: EVAL_ERROR unbound symbol: string-append did you mean `str`?
(define (greet name) (string-append "hi " name))
(greet "x")

;; error: EVAL_ERROR set! of unbound variable: never-defined

(set! never-defined 1)

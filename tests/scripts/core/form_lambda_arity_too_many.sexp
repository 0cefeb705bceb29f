;; error: EVAL_ERROR anonymous procedure: expected 1 argument, got 2

((fn (a) a) 1 2)

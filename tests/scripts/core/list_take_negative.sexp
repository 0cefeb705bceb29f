;; error: EVAL_ERROR take: index -1 is negative

(take '(1 2) -1)

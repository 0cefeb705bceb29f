;; error: EVAL_ERROR substring: index -1 is negative

(substring "abc" -1 2)

;; error: EVAL_ERROR fail: expected a details map

(fail :r "m" [1])

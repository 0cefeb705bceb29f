;; error: EVAL_ERROR number->string

(number->string "5")

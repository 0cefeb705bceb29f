;; error: EVAL_ERROR expansion failed

(defmacro bad (x) (error "expansion failed"))
(bad 1)

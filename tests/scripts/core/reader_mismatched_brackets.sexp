;; error: SYNTAX_ERROR does not close


(prn [1 2)

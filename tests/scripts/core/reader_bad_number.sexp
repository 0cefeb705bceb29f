;; error: SYNTAX_ERROR invalid number


(prn 12abc)

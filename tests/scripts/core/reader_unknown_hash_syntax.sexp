;; error: SYNTAX_ERROR unknown syntax


(prn #x10)

;; error: SYNTAX_ERROR unclosed string


(prn "abc)

;; error: SYNTAX_ERROR unexpected


(prn 1))

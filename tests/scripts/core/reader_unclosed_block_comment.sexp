;; error: SYNTAX_ERROR block comment


(prn 1)
#| never closed

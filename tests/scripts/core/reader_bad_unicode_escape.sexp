;; error: SYNTAX_ERROR Unicode scalar value


(prn "\u{110000}")

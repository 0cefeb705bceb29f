;; error: SYNTAX_ERROR unclosed

(read "(unclosed")

;; error: SYNTAX_ERROR catch needs a variable

(try 1 (catch (e) 2))

;; error: SYNTAX_ERROR (quote datum)

(quote a b)

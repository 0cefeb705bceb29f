;; error: EVAL_ERROR string-replace must not be empty

(string-replace "abc" "" "x")

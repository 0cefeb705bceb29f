;; error: SYNTAX_ERROR even number


(prn {"a" 1 "b"})

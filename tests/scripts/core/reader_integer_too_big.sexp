;; error: SYNTAX_ERROR outside the 64-bit range


(println "never printed")
(prn 9223372036854775808)

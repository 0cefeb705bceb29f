;; error: SYNTAX_ERROR unknown escape


(println "not run")
(prn "a\qb")

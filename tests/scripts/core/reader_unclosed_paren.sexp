;; error: SYNTAX_ERROR unclosed


(println "nothing runs")
(prn (+ 1 2)

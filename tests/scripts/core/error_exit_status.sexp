;; stdout: bye
;; exit: 3
(println "bye")
(exit 3)
(println "never")

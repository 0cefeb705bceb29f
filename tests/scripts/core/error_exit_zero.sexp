;; stdout: done
(println "done")
(exit)

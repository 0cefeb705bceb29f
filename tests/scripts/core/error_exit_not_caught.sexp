;; exit: 4
(try (exit 4) (catch e (println "caught")))

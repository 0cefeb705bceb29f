;; stdout: handling
;; stdout: b
(prn (try (error "x") (catch e (println "handling") 'a 'b)))

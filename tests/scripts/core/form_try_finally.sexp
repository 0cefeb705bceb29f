;; stdout: cleanup
;; stdout: caught
;; stdout: always
;; stdout: ok
;; stdout: inner finally
;; stdout: "inner"
(prn (try (error "x") (catch e 'caught) (finally (println "cleanup"))))
(prn (try 'ok (finally (println "always"))))
(prn (try (try (error "inner") (finally (println "inner finally"))) (catch e e.message)))

;; stdout: ran
;; error: EVAL_ERROR escapes

(try (error "escapes") (finally (println "ran")))

;; stdout: "two"
(prn (try (try (error "one") (catch e (error "two"))) (catch e e.message)))

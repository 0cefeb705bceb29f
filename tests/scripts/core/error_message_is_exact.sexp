;; stdout: "exactly this"
;; stdout: ""
;; stdout: "42"
(prn (try (error "exactly this") (catch e e.message)))
(prn (try (error "") (catch e e.message)))
(prn (try (error 42) (catch e e.message)))

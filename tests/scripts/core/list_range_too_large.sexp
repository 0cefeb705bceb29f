;; stdout: ("RESOURCE_EXHAUSTION" "memory")
(prn (try (range 1000000000000) (catch e (list e.type e.details.resource))))

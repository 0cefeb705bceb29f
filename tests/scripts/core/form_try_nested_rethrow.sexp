;; stdout: ("TASK_FAILURE" "inner_reason" "deep")
(define r (try
            (try (fail :inner_reason "deep") (catch e (raise e)))
            (catch outer (list outer.type outer.reason outer.message))))
(prn r)

;; stdout: "TASK_FAILURE" "llm_error" "no answer" {}
(define e (try (fail "llm_error" "no answer") (catch err err)))
(prn e.type e.reason e.message e.details)

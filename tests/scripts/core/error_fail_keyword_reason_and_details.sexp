;; stdout: "tool_execution_error" {"code" 3 "out" ("a")} "a"
(define e (try (fail :tool_execution_error "exit 3" {"code" 3 "out" ["a"]}) (catch err err)))
(prn e.reason e.details e.details.out[0])

;; stdout: "Expected output of type \"array\" but got \"object\" — the answer: {\"a\": 1}"
;; stdout: {"expectedType" "array" "actualType" "object" "location" "" "errors" ({"pointer" "" "message" "Expected output of type \"array\" but got \"object\""}) "content" "{\"a\": 1}" "provider" "procedure" "model" nil "task" "arr" "round" 1 "trace" ({"task" "arr" "step" nil "file" "schemas.sexp" "line" 12})}
;; stdout: (1 2)
;; stdout: "Expected output of type \"string\" but got \"number\" at \"/name\" — the answer: {\"name\": 7}"
;; stdout: "/name"
;; stdout: "Output does not match the schema: \"name\" is a required property — the answer: {}"
;; stdout: "Ada"
;; stdout: "output_format_failure"
;; stdout: "VALIDATION_ERROR"
(define answer "{\"a\": 1}")
(set-provider! (fn (req) answer))
(deftask arr () :prompt "go" :output "json" :schema "array")
(prn (try (arr) (catch e e.message)))
(prn (try (arr) (catch e e.details)))
(set! answer "[1, 2]")
(prn (get (arr) "parsedContent"))
; a JSON-Schema map (:schema alone implies JSON output)
(deftask person () :prompt "go"
  :schema {"type" "object" "properties" {"name" {"type" "string"}} "required" ["name"]})
(set! answer "{\"name\": 7}")
(prn (try (person) (catch e e.message)))
(prn (try (person) (catch e e.details.location)))
(set! answer "{}")
(prn (try (person) (catch e e.message)))
(set! answer "{\"name\": \"Ada\"}")
(prn (get-in (person) ["parsedContent" "name"]))
; with a schema, output that is not JSON at all fails too
(set! answer "nope")
(prn (try (person) (catch e e.reason)))
(prn (try (deftask odd () :prompt "x" :schema "list") (catch e e.type)))

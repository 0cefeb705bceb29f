;; stdout: ("unknown tool `nope` (the tools are: add)")
;; stdout: ("the arguments are not a JSON object: {not json")
;; stdout: ("invalid arguments: /a: \"two\" is not of type \"integer\"")
;; stdout: ("invalid arguments: \"b\" is a required property")
;; stdout: ("invalid arguments: Additional properties are not allowed ('c' was unexpected)")
;; stdout: ("RESOURCE_EXHAUSTION" "turns" 9 8 8)
;; stdout: ("RESOURCE_EXHAUSTION" "turns" 3)
;; stdout: ":tools must be a list of tasks (got (\"add\"))"
;; stdout: ":param-types must be a map from parameter names to string, integer, number, boolean, array, object (got {\"a\" \"float\"})"
;; stdout: ":tools must be given only on atomic tasks (with :prompt) (got (#<task add>))"
;; stdout: "llm_error"
; Bad tool calls go back to the model as errors; the loop is bounded.
(deftask add (a b) :param-types {"a" "integer" "b" "integer"} (+ a b))
(define (asking calls)
  (fn (request)
    (if (= (get (last request.messages) "role") "user") {"tool_calls" calls} "gave up")))
(deftask calc (q) :prompt "{{q}}" :tools [add])
(define (errors calls)
  (with-provider (asking calls)
    (map (fn (c) c.error) (get-in (calc "x") ["notes" "toolCalls"]))))
(prn (errors [{"name" "nope" "arguments" {}}]))
(prn (errors [{"name" "add" "arguments" "{not json"}]))
(prn (errors [{"name" "add" "arguments" {"a" "two" "b" 3}}]))
(prn (errors [{"name" "add" "arguments" {"a" 1}}]))
(prn (errors [{"name" "add" "arguments" {"a" 1 "b" 2 "c" 3}}]))
; a model that never stops asking
(define (forever request) {"tool_calls" [{"name" "add" "arguments" {"a" 1 "b" 1}}]})
(prn (with-provider forever (try (calc "x") (catch e [e.type e.details.resource e.details.used e.details.limit (length e.details.toolCalls)]))))
(deftask calc3 (q) :prompt "{{q}}" :tools [add] :max-turns 3)
(prn (with-provider forever (try (calc3 "x") (catch e [e.type e.details.resource e.details.limit]))))
(prn (try (deftask t () :prompt "x" :tools ["add"]) (catch e e.message)))
(prn (try (deftask t (a) :param-types {"a" "float"} (+ a 1)) (catch e e.message)))
(prn (try (deftask t (a) :tools [add] (+ a 1)) (catch e e.message)))
(prn (with-provider (fn (r) {"tool_calls" "no"}) (try (calc "x") (catch e e.reason))))

;; stdout: "The sum is 5"
;; stdout: ({"name" "add" "arguments" {"a" 2 "b" 3} "result" 5} {"name" "explode" "arguments" {"why" "test"} "error" "boom: test"})
;; stdout: 2
;; stdout: ({"name" "add" "description" "Add two integers" "parameters" {"type" "object" "properties" {"a" {"type" "integer"} "b" {"type" "integer"}} "required" ("a" "b") "additionalProperties" false}} {"name" "explode" "description" "Always fails" "parameters" {"type" "object" "properties" {"why" {"type" "string"} "loud" {"type" "string"}} "required" ("why") "additionalProperties" false}})
;; stdout: {"role" "assistant" "content" "" "tool_calls" ({"id" "c1" "name" "add" "arguments" {"a" 2 "b" 3}} {"id" "c2" "name" "explode" "arguments" {"why" "test"}})}
;; stdout: {"role" "tool" "content" "5" "tool_call_id" "c1"}
;; stdout: {"role" "tool" "content" "Error: boom: test" "tool_call_id" "c2"}
;; stdout: ("add" "explode") {"a" "integer" "b" "integer"}
; A scripted model: first it asks for two tools, then it answers with what came back.
(define requests [])
(define (model request)
  (set! requests (append requests [request]))
  (define last-message (last request.messages))
  (if (= last-message.role "user")
      {"tool_calls" [{"id" "c1" "name" "add" "arguments" {"a" 2 "b" 3}}
                     {"id" "c2" "name" "explode" "arguments" {"why" "test"}}]}
      (str "The sum is " (get (nth request.messages 2) "content"))))
(set-provider! model)
(deftask add (a b) :description "Add two integers" :param-types {"a" "integer" "b" "integer"}
  (+ a b))
(deftask explode (why (loud false)) :description "Always fails"
  (error (str "boom: " why)))
(deftask calc (q) :prompt "{{q}}" :tools [add explode])
(define r (calc "What is 2 + 3?"))
(prn r.content)
(prn r.notes.toolCalls)
(prn (length requests))
(prn (get (first requests) "tools"))
(prn (nth (get (second requests) "messages") 1))
(prn (nth (get (second requests) "messages") 2))
(prn (nth (get (second requests) "messages") 3))
(prn calc.metadata.tools add.metadata.param_types)

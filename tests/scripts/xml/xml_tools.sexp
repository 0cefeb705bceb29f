;; stdout: "The sum is 5"
;; stdout: ({"name" "add" "arguments" {"a" 2 "b" 3} "result" 5})
;; stdout: {"temperature" 0 "max_tokens" 50 "top_p" 0.9 "stop" "END" "seed" 7}
;; stdout: ({"name" "add" "description" "Add two integers" "parameters" {"type" "object" "properties" {"a" {"type" "integer"} "b" {"type" "integer"}} "required" ("a" "b") "additionalProperties" false}})
; <tools>, <model_options> and <input type> in XML: the same task as the deftask options
(define requests [])
(define (model request)
  (set! requests (append requests [request]))
  (if (= (length request.messages) 1)
      {"tool_calls" [{"id" "c1" "name" "add" "arguments" {"a" 2 "b" 3}}]}
      (str "The sum is " (get (last request.messages) "content"))))
(set-provider! model)
(import "templates/tools.xml")
(define r (calc "What is 2 + 3?"))
(prn r.content)
(prn r.notes.toolCalls)
(prn (get (first requests) "options"))
(prn (get (first requests) "tools"))

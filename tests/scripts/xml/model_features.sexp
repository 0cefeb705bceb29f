;; stdout: "neutral"
;; stdout: {"presence_penalty" 0.5 "reasoning_effort" "low" "service_tier" "flex" "extra_body" {"top_k" 20 "stop_after" (1 2.5 nil true)}} ("positive" "negative" "neutral")
;; stdout: "required" "root ::= [0-9]+"
;; stdout: "because"
; The model features written in XML: <choice>, <tool_choice>, <grammar>, and the open
; options in <model_options>, <extra_body> holding JSON.
(define seen nil)
(set-provider! (fn (request) (set! seen request) "neutral"))
(import "templates/model_features.xml")
(prn (get (mood "a chair") "content"))
(prn seen.options seen.choice)
(deftask add (a b) (+ a b))
(import "templates/model_features_tools.xml")
(calc "2+3")
(prn seen.tool_choice seen.grammar)
(prn (get-in (with-provider (fn (r) {"content" "positive" "reasoning" "because"}) (mood "x")) ["notes" "reasoning"]))

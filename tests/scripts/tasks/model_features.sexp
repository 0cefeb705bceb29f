;; stdout: {"frequency_penalty" 0.5 "presence_penalty" -0.5 "reasoning_effort" "low" "service_tier" "flex" "extra_body" {"top_k" 3}}
;; stdout: {"frequency_penalty" 0.5 "presence_penalty" -0.5 "reasoning_effort" "high" "service_tier" "flex" "extra_body" {"cache_prompt" true}}
;; stdout: (("rv_sum-d4cf39ff" "rv_sum-d4cf39ff") ("rv_sum-d4cf39ff" "auto"))
;; stdout: "5" (("rv/sum" 5))
;; stdout: "neutral" 1 ("positive" "negative" "neutral")
;; stdout: "negative" 2 "Your answer has these problems:\n- the answer must be exactly one of \"positive\", \"negative\", \"neutral\"\nAnswer again, with every problem fixed."
;; stdout: ("output_format_failure" "the answer must be exactly one of \"positive\", \"negative\", \"neutral\" — the answer: still unsure")
;; stdout: "root ::= [0-9]+"
;; stdout: "model option `reasoning_effort` must be one of \"minimal\", \"low\", \"medium\", \"high\" (got \"extreme\")"
;; stdout: "model option `extra_body` must be a map of request fields ({\"field\" value …}) (got [1])"
;; stdout: ":tool-choice must be \"auto\", \"none\", or with :tools \"required\" or the name of one of them (got \"other\")"
;; stdout: ":choice must be alone: the answer is one of its strings, so not with :schema, :output \"json\" or :grammar (got (\"a\"))"
;; stdout: ":choice must be a list of different strings, at least one (got ())"
;; stdout: "with-provider: model option `reasoning_effort` must be one of \"minimal\", \"low\", \"medium\", \"high\" (got \"max\")"
; The open model options reach a procedure provider as set, layered like the others.
(define seen [])
(define answers [])
(define (spy req)
  (set! seen (append seen [req]))
  (if (empty? answers) "ok" (let ((a (first answers))) (set! answers (rest answers)) a)))
(set-provider! spy :reasoning-effort "low" :extra-body {"top_k" 3})
(deftask ask (q) :prompt "{{q}}" :frequency-penalty 0.5 :presence_penalty -0.5 :service-tier "flex")
(ask "x")
(prn (get (last seen) "options"))
(with-provider spy :reasoning_effort "high" :extra-body {"cache_prompt" true}
  (ask "y")
  (prn (get (last seen) "options")))
; A tool whose name the providers refuse is offered under a derived name and mapped back.
(deftask rv/sum (a b) :description "Add" :param-types {"a" "integer" "b" "integer"} (+ a b))
(deftask calc (q) :prompt "{{q}}" :tools [rv/sum] :tool-choice "rv/sum")
(define (caller req)
  (set! seen (append seen [req]))
  (if (= (get (last req.messages) "role") "user")
      {"tool_calls" [{"id" "c1" "name" (get (first req.tools) "name") "arguments" {"a" 2 "b" 3}}]}
      "5"))
(define r (with-provider caller (calc "2+3?")))
(prn (map (fn (req) [(get (first req.tools) "name") req.tool_choice]) (reverse (take (reverse seen) 2))))
(prn r.content (map (fn (c) [c.name c.result]) r.notes.toolCalls))
; :choice: the answer is one of the strings; another is asked again under :retries.
(deftask mood (text) :prompt "{{text}}" :choice ["positive" "negative" "neutral"] :retries 1)
(set! answers [" neutral\n"])
(define m (mood "meh"))
(prn m.content m.notes.rounds (get (last seen) "choice"))
(set! answers ["unsure" "negative"])
(define m (mood "bad"))
(prn m.content m.notes.rounds (get (last (get (last seen) "messages")) "content"))
(set! answers ["unsure" "still unsure"])
(prn (try (mood "?") (catch e [e.reason e.message])))
(deftask digits () :prompt "n" :grammar "root ::= [0-9]+")
(digits)
(prn (get (last seen) "grammar"))
; Bad option values are errors that name the option, when the task is defined.
(prn (try (deftask t1 () :prompt "x" :reasoning-effort "extreme") (catch e e.message)))
(prn (try (deftask t2 () :prompt "x" :extra-body [1]) (catch e e.message)))
(prn (try (deftask t3 () :prompt "x" :tools [rv/sum] :tool-choice "other") (catch e e.message)))
(prn (try (deftask t4 () :prompt "x" :choice ["a"] :output "json") (catch e e.message)))
(prn (try (deftask t5 () :prompt "x" :choice []) (catch e e.message)))
(prn (try (with-provider spy :reasoning-effort "max" (ask "z")) (catch e e.message)))

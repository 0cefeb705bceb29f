;; stdout: ("A!" "B!")
;; stdout: true
;; stdout: false
;; stdout: #<task shout>
;; stdout: "A!"
;; stdout: ("B!")
;; stdout: "Shout it"
;; stdout: "atomic"
;; stdout: "loud"
;; stdout: ("x")
;; stdout: "json"
;; stdout: "gpt-test"
;; stdout: "ui"
;; stdout: "ui"
;; stdout: ("shout" "whisper")
;; stdout: ("shout")
;; stdout: ("whisper")
;; stdout: "{\"name\":\"whisper\",\"type\":\"composite\",\"subtype\":null,\"description\":null,\"params\":[\"x\"],\"metadata\":{\"output\":\"text\",\"inherit_context\":\"full\",\"defaults\":{},\"origin\":\"task_values.sexp\"}}"
;; stdout: "template_not_found"
;; stdout: #<task shout>
;; stdout: task
;; stdout: true
(set-provider! (fn (req) (str req.prompt "!")))
(deftask shout (x) :prompt "{{x}}" :description "Shout it" :subtype "loud"
  :output "json" :model "gpt-test" :metadata {"team" "ui"})
(set-provider! (fn (req) (str "\"" req.prompt "!\"")))
(prn (map (fn (r) r.parsedContent) (map shout ["A" "B"])))
(prn (task? shout))
(prn (task? car))
(define f shout)
(prn f)
(prn (get (apply f ["A"]) "parsedContent"))
(prn (map (fn (r) r.parsedContent) (filter (fn (r) (= r.parsedContent "B!")) (map f ["A" "B"]))))
(prn shout.description)
(prn shout.type)
(prn (get (get-task "shout") "subtype"))
(prn shout.params)
(prn shout.metadata.output)
(prn shout.model)
(prn (get-in shout ["metadata" "team"]))
(prn shout.team)
(deftask whisper (x) (string-downcase x))
(prn (task-names))
(prn (task-names :type "atomic"))
(prn (task-names :type "composite"))
(prn (json-stringify whisper))
(prn (try (get-task "nobody") (catch e e.reason)))
(prn taskLibrary.shout)
(prn (type-of shout))
; a task is found by name even where the name is not bound
(prn (let ((g (eval 'shout))) (eq? g shout)))

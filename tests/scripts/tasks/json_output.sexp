;; stdout: ("x" "y")
;; stdout: nil
;; stdout: {"fenced" true}
;; stdout: "COMPLETE"
;; stdout: nil
;; stdout: true
;; stdout: "just text"
(define answer "{\"tags\": [\"x\", \"y\"]}")
(set-provider! (fn (req) answer))
(deftask tag (text) :prompt "tag {{text}}" :output "json")
(define r (tag "hello"))
(prn r.parsedContent.tags)
(prn r.notes.parseError)
; a Markdown code fence around the JSON is taken off
(set! answer "```json\n{\"fenced\": true}\n```")
(prn (get (tag "x") "parsedContent"))
; a parse failure is noted, not raised
(set! answer "just text")
(define bad (tag "x"))
(prn bad.status)
(prn bad.parsedContent)
(prn (string? bad.notes.parseError))
(prn bad.content)

;; stdout: "Summarize in a brief style: a cat"
;; stdout: "Summarize in a long style: a dog"
;; stdout: "Summarize in a long style: a cow"
;; stdout: "You are terse."
;; stdout: "COMPLETE"
;; stdout: nil
;; stdout: "summarize"
;; stdout: 1
;; stdout: "Summarize in a brief style: echo"
(set-provider! (fn (req) req.prompt))
(deftask summarize (text (style "brief"))
  :description "Summarize a text"
  :system "You are terse."
  :prompt "Summarize in a {{style}} style: {{text}}")
(prn (get (summarize "a cat") "content"))
(prn (get (summarize :text "a dog" :style "long") "content"))
; mixed: a positional argument fills the first parameter not named
(prn (get (summarize :style "long" "a cow") "content"))
(set-provider! (fn (req) req.system))
(define r (summarize "x"))
(prn r.content)
(prn r.status)
(prn r.parsedContent)
(prn r.notes.task)
(prn r.notes.rounds)
; "echo", the default provider, answers with the rendered prompt
(set-provider! "echo")
(prn (get (summarize "echo") "content"))

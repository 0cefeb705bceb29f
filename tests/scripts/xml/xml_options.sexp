;; stdout: "HELLO!"
;; stdout: "hello from sh\n"
;; stdout: "bad [{\"severity\":\"critical\",\"message\":\"again\"}]" 2
;; stdout: 5 2.5 1
; every deftask option has an XML element: stdin, env, shell, timeout, audits, retries, max_turns
(set-provider! (fn (req) req.prompt))
(import "templates/options.xml")
(prn (get (shout "hello") "content"))
(prn (get (greeting) "content"))
(define r (careful "bad"))
(prn r.content r.notes.rounds)
(prn careful.max_turns careful.timeout careful.retries)

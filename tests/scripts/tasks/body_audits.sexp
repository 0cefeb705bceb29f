;; stdout: "fixed after: draft is too short"
;; stdout: 2
;; stdout: "mine"
;; stdout: (1 "from caller")
(define (long-enough r)
  (if (< (string-length r.content) 10)
      [{"severity" "critical" "message" "draft is too short"}]
      []))
; a body task with audits sees the previous round's issues as `issues`
(deftask draft (topic) :audits long-enough :retries 1
  (if (empty? issues) topic (str "fixed after: " (get (first issues) "message"))))
(define r (draft "tiny"))
(prn r.content)
(prn r.notes.rounds)
; a parameter named `issues` stays the parameter
(set-provider! (fn (req) req.prompt))
(deftask own-issues (issues) :prompt "{{issues}}")
(prn (get (own-issues "mine") "content"))
; :context-keys may be an expression giving the names
(define keys ["note"])
(deftask picky (a) :context-keys keys (list a note))
(prn (get (let ((note "from caller")) (picky 1)) "parsedContent"))

;; stdout: "second try"
;; stdout: 2
;; stdout: ({"severity" "warning" "message" "fine"})
;; stdout: "subtask_failure"
;; stdout: "INVALID_OUTPUT"
(set-provider! (fn (req) (if (= req.round 1) "bad" "second try")))
(define (not-bad r)
  (if (= r.content "bad")
      {"severity" "critical" "message" "bad answer"}
      [{"severity" "warning" "message" "fine"}]))
(deftask ask (q) :prompt "{{q}}")
(define r (sequential (step ask "q" :audits [not-bad] :retries 1)))
(prn r.content)
(prn r.notes.rounds)
(prn r.notes.issues)
(define e (try (sequential (step ask :q "q" :audits not-bad)) (catch e e)))
(prn e.reason)
(prn e.details.subtaskError.type)

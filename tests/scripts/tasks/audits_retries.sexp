;; stdout: 2
;; stdout: ({"severity" "warning" "message" "short is good"})
;; stdout: "ok after 1 issue(s)"
;; stdout: "Answer q. Fix: [{\"severity\":\"critical\",\"message\":\"too long\"}]"
;; stdout: 1
;; stdout: "INVALID_OUTPUT"
;; stdout: ("too long")
;; stdout: "task `strict` failed its audits after 1 round: too long"
;; stdout: "short"
;; stdout: 1
;; error: INVALID_OUTPUT failed its audits after 3 rounds
(define prompts [])
(define answer-text "a much too long answer")
(define (provider req)
  (set! prompts (append prompts [req.prompt]))
  (if (= req.round 1) answer-text (str "ok after " (length req.issues) " issue(s)")))
(set-provider! provider)
(define (short-enough r)
  (if (> (string-length r.content) 20)
      [{"severity" "critical" "message" "too long"}]
      [{"severity" "warning" "message" "short is good"}]))
; a critical issue makes another round, which sees the issues
(deftask answer (q) :prompt "Answer {{q}}. Fix: {{issues}}" :audits [short-enough] :retries 2)
(define r (answer "q"))
(prn r.notes.rounds)
(prn r.notes.issues)
(prn r.content)
(prn (nth prompts 1))
; without :retries a critical issue fails the call at once
(deftask strict (q) :prompt "{{q}}" :audits short-enough)
(set! prompts [])
(define e (try (strict "q") (catch e e)))
(prn (length prompts))
(prn e.type)
(prn e.details.violations)
(prn e.message)
(set! answer-text "short")
(define ok (strict "q"))
(prn ok.content)
(prn ok.notes.rounds)
; every round failing: INVALID_OUTPUT after 1 + retries rounds
(set-provider! (fn (req) "a much too long answer, always"))
(answer "q")

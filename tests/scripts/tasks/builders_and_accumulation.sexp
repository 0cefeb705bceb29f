;; stdout: "FAILED" ({"severity" "critical" "message" "the :input builder failed: no label"})
;; stdout: "TASK_FAILURE" "input_validation_failure"
;; stdout: "Send it to the null queue"
;; stdout: "--- step 0 (outline) ---\noutline of tides\n--- step 2 (facts) ---\nfacts of tides"
;; stdout: "TASK_FAILURE" "SYNTAX_ERROR"
;; stdout: "VALIDATION_ERROR" "" (1 2)
; seed 003's builder pattern: a failing builder makes the step a FAILED result when asked
(set-provider! (fn (req) req.prompt))
(deftask classify (issue) :prompt "{{issue}}")
(deftask route ((label nil)) :prompt "Send it to the {{label}} queue")
(define (needs-label earlier) (error "no label"))
(deftask triage (issue)
  (sequential
    (classify issue)
    (step route :inputs-from [0] :input needs-label :on-builder-error :result)
    (last step_results)))
(define r (triage "a crash"))
(prn r.status r.notes.issues)
(prn r.notes.error.type r.notes.error.reason)
; the next step still runs, and sees the FAILED result among the earlier ones
(deftask triage2 (issue)
  (sequential
    (step route :input needs-label :on-builder-error :result)
    (route)))
(prn (get (triage2 "x") "content"))
; :include-outputs-from: only the chosen earlier steps are accumulated
(deftask outline (topic) :prompt "outline of {{topic}}")
(deftask facts (topic) :prompt "facts of {{topic}}")
(deftask noise (topic) :prompt "noise about {{topic}}")
(deftask draft () :prompt "{{accumulated}}")
(deftask write (topic)
  (sequential :accumulate "full_output" :include-outputs-from ["outline" 2]
              (outline topic) (noise topic) (facts topic) (draft)))
(prn (get (write "tides") "content"))
; bad options are refused before anything runs
(define (refusal code) (try (eval (read code)) (catch e e.type)))
(prn (refusal "(sequential :accumulate \"full_output\" :include-outputs-from 5 (outline \"x\"))")
     (refusal "(deftask t2 () (sequential (step route :input needs-label :on-builder-error :maybe)))"))
; a builder that returns something other than a map is a VALIDATION_ERROR naming it
(deftask triage3 (issue)
  (sequential (step route :input (fn (earlier) [1 2]) :on-builder-error :result)))
(define bad (try (triage3 "x") (catch e e)))
(prn bad.type bad.path bad.invalidModel)

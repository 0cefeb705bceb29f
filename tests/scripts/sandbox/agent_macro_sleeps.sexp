;; stdout: ("limit")
;; stdout: "a macro ran longer than the 2s checking allows it"
;; stdout: "awake"
; a step whose macro sleeps is checked within checking's 2 seconds, not for ever: the
; problem goes back to the model and the agent goes on
(define attempts
  ["(defmacro nap () (sleep 100000)) (nap)"
   "(final-answer \"awake\")"])
(set-provider! (fn (req) (nth attempts (- req.round 1))))
(define r (code-agent "Nap" :max-steps 3 :timeout 2))
(define first-step (first r.notes.steps))
(prn (map (fn (p) p.kind) first-step.problems))
(prn (get-in first-step ["problems" 0 "message"]))
(prn r.content)

;; stdout: "CONTINUATION"
;; stdout: 2
;; stdout: "3"
;; stdout: (1 2)
; without a final answer after :max-steps, the agent returns its last step as a
; CONTINUATION
(set-provider! (fn (req) (str "(+ 1 " req.round ")")))
(define r (code-agent "Never finish" :max-steps 2))
(prn r.status)
(prn r.notes.iterations)
(prn r.content)
(prn (map (fn (s) (get s "step")) r.notes.steps))

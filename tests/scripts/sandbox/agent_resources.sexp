;; stdout: "COMPLETE"
;; stdout: ("RESOURCE_EXHAUSTION" "RESOURCE_EXHAUSTION" "RESOURCE_EXHAUSTION" nil)
;; stdout: ("fuel" "time" "memory" nil)
;; stdout: "still here"
; code that loops forever, sleeps too long or allocates without end runs out of its
; fuel, time or memory; each step fails with RESOURCE_EXHAUSTION and the agent goes on
(define attempts
  ["(define (spin n) (spin (+ n 1))) (spin 0)"
   "(sleep 600)"
   "(define (grow s) (grow (str s s))) (grow \"abcdefgh\")"
   "(final-answer \"still here\")"])
(set-provider! (fn (req) (nth attempts (- req.round 1))))
(define r (code-agent "Misbehave" :max-steps 6 :fuel 2000 :timeout 2 :max-memory 4000000))
(prn r.status)
(prn (map (fn (s) (get-in s ["error" "type"])) r.notes.steps))
(prn (map (fn (s) (get-in s ["error" "details" "resource"])) r.notes.steps))
(prn r.content)

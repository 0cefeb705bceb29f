;; stdout: "COMPLETE"
;; stdout: ({"message" "unbound symbol: fact" "line" 1 "column" 15 "kind" "unbound"})
;; stdout: ("" "ran")
;; stdout: true
;; stdout: 2
; the first answer uses a name bound nowhere: the problem goes back to the model and
; nothing of that answer runs (its print never happens)
(define answers
  {"1" "(print \"ran\") fact"
   "2" "(print \"ran\") (final-answer 7)"})
(set-provider!
  (fn (req)
    (if (= req.round 2)
        ; the problem is the last message the model sees
        (if (string-contains? (get (last req.messages) "content") "unbound symbol: fact")
            (get answers "2")
            "(final-answer \"the problem was not sent back\")")
        (get answers "1"))))
(define r (code-agent "Print and answer" :max-steps 3))
(prn r.status)
(prn (get (first r.notes.steps) "problems"))
(prn (map (fn (s) (or (get s "output") "")) r.notes.steps))
(prn (nil? (get (first r.notes.steps) "output")))
(prn r.notes.iterations)

;; stdout: "bug"
;; stdout: 2
;; stdout: (1 2)
;; stdout: ({"severity" "critical" "message" "/label: 7 is not one of \"bug\" or \"feature\"" "pointer" "/label"})
;; stdout: "FAILED after 3 rounds"
;; stdout: 3
; :retries re-asks after an answer that does not parse or does not match the schema.
(define seen [])
(define answers ["{\"label\": 7}" "{\"label\": \"bug\"}"])
(set-provider! (fn (req)
  (set! seen (append seen [req]))
  (nth answers (- req.round 1))))
(deftask classify (text) :prompt "Classify {{text}}" :retries 2
  :schema {"type" "object" "properties" {"label" {"enum" ["bug" "feature"]}} "required" ["label"]})
(define r (classify "crash"))
(prn r.parsedContent.label)
(prn r.notes.rounds)
(prn (map (fn (q) q.round) seen))
(prn (get (nth seen 1) "issues"))
; only the last round's failure is raised
(set! answers ["nope" "still no" "never"])
(define e (try (classify "crash") (catch e e)))
(prn (if (= e.details.round 3) "FAILED after 3 rounds" e.details.round))
(prn e.details.round)

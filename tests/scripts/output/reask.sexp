;; stdout: "bug"
;; stdout: 2
;; stdout: (1 2)
;; stdout: ({"severity" "critical" "message" "/label: 7 is not one of \"bug\" or \"feature\"" "pointer" "/label"})
;; stdout: {"role" "user" "content" "Classify crash"}
;; stdout: {"role" "assistant" "content" "{\"label\": 7}"}
;; stdout: {"role" "user" "content" "Your answer has these problems:\n- /label: 7 is not one of \"bug\" or \"feature\"\nAnswer again, with every problem fixed."}
;; stdout: "FAILED after 3 rounds"
;; stdout: 3
;; stdout: 5
;; stdout: ("user" "assistant" "user" "assistant" "user")
;; stdout: "Your answer has these problems:\n- too vague\n- (warning) could be shorter\nAnswer again, with every problem fixed."
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
; the second round continues the conversation: the answer, then its problems
(for-each prn (get (nth seen 1) "messages"))
; only the last round's failure is raised
(set! answers ["nope" "still no" "never"])
(define e (try (classify "crash") (catch e e)))
(prn (if (= e.details.round 3) "FAILED after 3 rounds" e.details.round))
(prn e.details.round)
; the third round has both earlier answers and both lists of problems
(prn (length (get (last seen) "messages")))
(prn (map (fn (m) m.role) (get (last seen) "messages")))
; audit issues are re-asked the same way, warnings marked as such
(define (picky r)
  [{"severity" "critical" "message" "too vague"} {"severity" "warning" "message" "could be shorter"}])
(set! seen [])
(set-provider! (fn (req) (set! seen (append seen [req])) "an answer"))
(deftask judge (x) :prompt "Judge {{x}}" :audits picky :retries 1)
(try (judge "it") (catch e nil))
(prn (get (last (get (last seen) "messages")) "content"))

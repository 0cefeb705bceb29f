;; stdout: "bug" 2
;; stdout: "INVALID_OUTPUT"
; XML tasks take <retries> and <audits> like :retries and :audits.
(set-provider! (fn (req)
  (if (string-starts-with? req.prompt "Label")
      (if (= req.round 1) "no idea" "{\"label\": \"bug\"}")
      "a very long answer indeed")))
(define (brief r) (if (> (string-length r.content) 5) [{"severity" "critical" "message" "too long"}] []))
(import "templates/retried.xml")
(define r (labelled "crash"))
(prn r.parsedContent.label r.notes.rounds)
(prn (try (short "hi") (catch e e.type)))

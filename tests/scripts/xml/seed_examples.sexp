;; stdout: "Process {\"rows\":[1,2]}"
;; stdout: "Process {\"items\":3}"
;; stdout: "Handle success"
;; stdout: "Handle error"
;; stdout: nil
;; stdout: "error_handler" "atomic"
;; stdout: "Draft about tides in a calm tone"
;; stdout: "Draft about tides in a stormy tone"
;; stdout: "another name for draft"
;; stdout: "Polish the text about tides"
;; stdout: "director" "evaluator"
; every XML example of the seeds imports and runs; the model is a stand-in
(set-provider! (fn (req)
                 (cond ((= req.prompt "Get data") "{\"items\": 3}")
                       ((= req.task "validate") req.prompt)
                       (else req.prompt))))
(define (get-data) {"rows" [1 2]})
(import "templates/seeds/binding.xml")
(prn (get (explicit_binding) "content"))
(prn (get (automatic_step_results) "content"))
; the cond example: validate's JSON output picks the case
(set-provider! (fn (req)
                 (cond ((= req.task "validate") (str "{\"valid\": " (if (= req.params.record "good") "true" "false")
                                                     ", \"errors\": " (if (= req.params.record "bad") "2" "0") "}"))
                       (else req.prompt))))
(import "templates/seeds/cond.xml")
(prn (get (check "good") "content"))
(prn (get (check "bad") "content"))
(prn (get (check "odd") "parsedContent"))
(prn (get (get-task "check/step-1") "subtype") (get (get-task "check/step-1") "type"))
; refs, aliases and subtypes; `polish` comes from a file imported afterwards
(set-provider! (fn (req) req.prompt))
(import "templates/seeds/refs.xml")
(import "templates/seeds/polish.xml")
(prn (get (write "tides") "content"))
(prn (get (write "tides" "stormy") "content"))
(prn write.description)
(prn (get (draft_then_polish "tides") "content"))
(prn draft.subtype polish.subtype)

;; stdout: "draft from: --- step 0 (outline) ---\noutline of tides"
;; stdout: true "none"
;; stdout: "--- templates/context.xml ---"
;; stdout: "--- ../memory/fixtures/docs/billing.md ---\nInvoices are sent on the first day of each month."
;; stdout: "outline of tides (feedback: more)" "CONTINUATION" 2
;; stdout: "director_evaluator_loop" "director" "evaluator"
;; stdout: "outline of tides (feedback: null)" "COMPLETE" 1
; <context_management>, <file_paths>, <context_query> and the director_evaluator_loop type
(set-provider! (fn (req) (if (= req.task "judge") "{\"success\": false, \"feedback\": \"more\"}" req.prompt)))
(import "templates/context.xml")
(prn (get (write "tides") "content"))
(prn isolated.fresh_context isolated.inherit_context)
(prn (first (string-split (get (read_one "templates/context.xml") "content") "\n")))
(prn (get (ask_docs "monthly invoices") "content"))
(define r (refine "tides"))
(prn r.content r.status r.notes.iterations)
(prn refine.type plan.subtype judge.subtype)
(set-provider! (fn (req) (if (= req.task "judge") "{\"success\": true, \"feedback\": \"\"}" req.prompt)))
(define ok (refine "tides"))
(prn ok.content ok.status ok.notes.iterations)

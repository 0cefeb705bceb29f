;; stdout: 3
;; stdout: 42
;; stdout: "B saw A"
;; stdout: "sequential"
;; stdout: "route crash to bug"
;; stdout: "route"
;; stdout: nil
(set-provider! (fn (req) req.prompt))
(deftask a () :prompt "A")
(deftask b (prev) :prompt "B saw {{prev}}")
(define last
  (sequential
    (a)
    (b step_results[0].content)
    42
    (prn (length step_results))))
(prn (sequential (a) (b "A") 42 step_results[2]))
(prn (get (sequential (a) (b step_results[0].content)) "content"))
; a body of one sequential form makes a sequential task
(set-provider! (fn (req) (if (string-contains? req.prompt "classify") "{\"label\": \"bug\"}" req.prompt)))
(deftask classify (issue) :prompt "classify {{issue}}" :output "json")
(deftask route (label issue) :prompt "route {{issue}} to {{label}}")
(deftask triage (issue)
  (sequential
    (classify issue)
    (route :label step_results[0].parsedContent.label :issue issue)))
(prn triage.type)
(define r (triage "crash"))
(prn r.content)
(prn r.notes.task)
; the history lives only as long as the sequence
(prn (try step_results (catch e nil)))

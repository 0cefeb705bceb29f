;; Issue triage: a model classifies each issue as JSON, the workflow routes it.
;;
;; Runs offline: the "model" is a provider written in the language, which labels an
;; issue from its keywords. Swap in a real one with `--provider openai` (and drop the
;; set-provider! line) without changing the workflow.
;;
;;   tasklisp run examples/triage.sexp

(define (keyword-model request)
  (let ((text (string-downcase request.params.issue)))
    (cond
      ((string-contains? request.task "classify")
       (json-stringify
         (cond
           ((or (string-contains? text "crash") (string-contains? text "down"))
            {"label" "bug" "urgent" true "score" 5})
           ((string-contains? text "slow") {"label" "performance" "urgent" false "score" 3})
           ((string-contains? text "please add") {"label" "feature" "urgent" false "score" 2})
           (else {"label" "question" "urgent" false "score" 1}))))
      (else (str "[" request.task "] " request.prompt)))))

(set-provider! keyword-model)

(deftask classify (issue)
  :description "Label an issue and say how urgent it is"
  :subtype "evaluator"
  :system "You triage issues. Answer with JSON {label, urgent, score}."
  :prompt "Issue: {{issue}}"
  :output "json"
  :schema {"type" "object"
           "properties" {"label" {"type" "string"} "urgent" {"type" "boolean"}}
           "required" ["label" "urgent"]})

(deftask page-oncall (issue) :prompt "Wake someone up: {{issue}}")
(deftask assign (team issue) :prompt "Assign to {{team}}: {{issue}}")
(deftask answer (issue) :prompt "Reply with a link to the docs: {{issue}}")

;; Classify, then route on the JSON output.
(deftask triage (issue)
  :description "Classify an issue and hand it to the right place"
  (sequential
    (classify issue)
    (cond-output step_results[0]
      (output.urgent (page-oncall issue))
      ((= output.label "performance") (assign "perf" issue))
      ((= output.label "feature") (assign "product" issue))
      (else (answer issue)))))

(define issues
  ["Login page is down for everyone"
   "Search is slow on large projects"
   "Please add dark mode"
   "How do I export a report?"])

(for-each
  (fn (issue)
    (let ((routed (triage issue)))
      (println (format "{} -> {}" issue routed.content))))
  issues)

;; Tasks are values: count the labels with map over the classifier.
(define labels (map (fn (r) r.parsedContent.label) (map classify issues)))
(println "labels:" labels)
(println "turns used:" (get-in (resource-metrics) ["turns" "used"]))

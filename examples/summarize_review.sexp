;; Summarise, then review: audits check each summary, and a failing summary is
;; retried with the reviewer's issues in the prompt.
;;
;; Offline: the "model" is a provider written in the language. In round 1 it
;; summarises sloppily (too long, no title); when it is sent issues it fixes them.
;;
;;   tasklisp run examples/summarize_review.sexp

(define (first-sentence text)
  (first (string-split text ".")))

(define (sloppy-model request)
  (cond
    ((= request.task "review")
     (json-stringify {"score" (if (string-contains? request.params.summary "Title:") 9 4)
                      "comment" "checked"}))
    ((empty? request.issues) request.params.text)
    (else (str "Title: " (string-upcase (first-sentence request.params.text))))))

(set-provider! sloppy-model)

;; Audits turn a result into a list of issues; a critical one fails the round.
(define (at-most words)
  (fn (result)
    (if (> (length (string-split result.content " ")) words)
        [{"severity" "critical" "message" (format "longer than {} words" words)}]
        [])))

(define (has-title result)
  (if (string-contains? result.content "Title:")
      []
      [{"severity" "warning" "message" "no title"}]))

(deftask summarize (text)
  :description "Summarise a text in one line"
  :prompt "Summarise in one line:\n{{text}}\n\nFix these issues: {{issues}}"
  :audits [(at-most 12) has-title]
  :retries 2)

(deftask review (summary)
  :subtype "evaluator"
  :prompt "Score this summary from 1 to 10 as JSON {score, comment}: {{summary}}"
  :output "json" :schema "object")

(define article
  "Tasklisp treats prompts as functions. Tasks compose with sequential, map and reduce. Results stay structured until they reach a model, and errors carry their reasons.")

(define outcome
  (sequential
    (summarize article)
    (step review :inputs-from ["summarize"]
          :input (fn (prev) {"summary" prev[0].content}))))

(define summary (summarize article))
(println "summary:" summary.content)
(println "rounds:" summary.notes.rounds)
(println "issues of the last round:" (map (fn (i) i.message) summary.notes.issues))
(println "review score:" outcome.parsedContent.score)

;; Without retries the same audit fails the call: INVALID_OUTPUT, caught here.
(deftask hasty (text) :prompt "{{text}}" :audits (at-most 12))
(define failure (try (hasty article) (catch e e)))
(println "hasty:" failure.type failure.details.violations)

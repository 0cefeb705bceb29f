;; stdout: 0.4 0.9
;; stdout: 0.9 "COMPLETE"
;; stdout: 0.75
;; stdout: true false
;; stdout: nil
;; stdout: "TASK_FAILURE" "output_format_failure" "an evaluator's successScore must be a number from 0 to 1, got 7"
; an evaluator's successScore (or score) is notes.successScore: per evaluation and on the loop
(define (write state iteration) (str "draft " iteration))
(define (judge result iteration)
  (if (= iteration 1)
      {"success" false "feedback" "more" "score" 0.4}
      {"success" true "feedback" "" "successScore" 0.9}))
(define r (director-evaluator-loop :director write :evaluator judge :input "x"))
(prn (get (first r.notes.evaluations) "successScore") (get (nth r.notes.evaluations 1) "successScore"))
(prn r.notes.successScore r.status)
; an atomic task of subtype evaluator has it in its own notes
(set-provider! (fn (req) "{\"success\": true, \"score\": 0.75}"))
(deftask grade (text) :subtype "evaluator" :prompt "grade {{text}}" :output "json")
(define g (grade "a poem"))
(prn g.notes.successScore)
; task-result? tells a TaskResult from a map with the same keys
(prn (task-result? (grade "a poem")) (task-result? {"content" "x" "status" "COMPLETE" "notes" {}}))
; a score on another scale is the evaluator's own; a successScore outside 0–1 is refused
(set-provider! (fn (req) "{\"success\": true, \"score\": 7}"))
(define seven (grade "a poem"))
(prn seven.notes.successScore)
(set-provider! (fn (req) "{\"success\": true, \"successScore\": 7}"))
(define e (try (grade "a poem") (catch e e)))
(prn e.type e.reason e.message)

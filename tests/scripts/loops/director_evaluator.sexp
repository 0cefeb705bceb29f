;; stdout: "draft 2 (fix the ending, after draft 1)" "COMPLETE" 2
;; stdout: (false true)
;; stdout: "fix the ending"
;; stdout: "draft 3 (fix the ending, after draft 2 (fix the ending, after draft 1))" "CONTINUATION" 3
;; stdout: "director" "evaluator"
;; stdout: "judge-task" "COMPLETE" 1
; the director proposes, the evaluator judges; feedback goes back to the director
(define (write input iteration)
  (if (= iteration 1)
      (str "draft " iteration)
      (str "draft " iteration " (" input.feedback ", after " input.previous ")")))
(define (judge result iteration)
  {"success" (>= iteration 2) "feedback" "fix the ending"})
(define r (director-evaluator-loop :director write :evaluator judge :max-iterations 3 :input "a poem"))
(prn r.content r.status r.notes.iterations)
(prn (map (fn (e) e.success) r.notes.evaluations))
(prn (get (first r.notes.evaluations) "feedback"))
; never satisfied: the last result, status CONTINUATION
(define never (director-evaluator-loop :director write :evaluator (fn (r i) {"success" false "feedback" "fix the ending"}) :max-iterations 3 :input "x"))
(prn never.content never.status never.notes.iterations)
; tasks: the evaluator answers JSON; roles become subtypes
(set-provider! (fn (req) (if (= req.task "grade") "{\"success\": true, \"feedback\": \"good\"}" req.task)))
(deftask compose (input) :prompt "write {{input}}")
(deftask grade (result) :prompt "grade {{result.content}}")
(director-evaluator-loop :director compose :evaluator grade :input "x")
(prn compose.subtype grade.subtype)
(define t (director-evaluator-loop :director (fn (i n) "judge-task") :evaluator grade :max-iterations 2))
(prn t.content t.status t.notes.iterations)

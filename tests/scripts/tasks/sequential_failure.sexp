;; stdout: "subtask_failure"
;; stdout: 1
;; stdout: ("A")
;; stdout: {"type" "TASK_FAILURE" "reason" "llm_error" "message" "boom" "content" "" "notes" {} "details" {"code" 7}}
;; stdout: "step 1 failed: llm_error: boom"
;; stdout: 0
;; stdout: "EVAL_ERROR"
;; error: TASK_FAILURE subtask_failure step 0 failed
(set-provider! (fn (req) req.prompt))
(deftask a () :prompt "A")
(define e (try (sequential (a) (fail :llm_error "boom" {"code" 7}) (a)) (catch e e)))
(prn e.reason)
(prn e.details.step)
(prn (map (fn (r) r.content) e.details.step_results))
(prn (dissoc e.details.subtaskError "location"))
(prn e.message)
; nested sequences wrap again
(define nested (try (sequential (sequential (car 1))) (catch e e)))
(prn nested.details.step)
(prn nested.details.subtaskError.details.subtaskError.type)
(sequential (error "stop"))

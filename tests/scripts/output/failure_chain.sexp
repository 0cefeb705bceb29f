;; stdout: "step 0 failed: llm_error: model down"
;; stdout: ({"task" "release" "step" 0 "file" "failure_chain.sexp" "line" 12} {"task" "check-all" "step" 0 "file" "failure_chain.sexp" "line" 11} {"task" "check-dir" "step" 1 "file" "failure_chain.sexp" "line" 10} {"task" "check-file" "step" nil "file" "failure_chain.sexp" "line" 9})
;; stdout: "llm_error: model down"
;; error: TASK_FAILURE subtask_failure step 0 failed: llm_error: model down
;; error: in release › step 0 › check-all › step 0 › check-dir › step 1 › check-file
; A failure four task calls deep: the message states the innermost cause once, the trace
; names every task crossed (outermost first), and the report prints the chain on one line.
(set-provider! (fn (req) (fail :llm_error "model down")))
(deftask check-file (path) :prompt "Check {{path}}")
(deftask check-dir (dir) (sequential (str dir "/") (check-file (str dir "/a.txt"))))
(deftask check-all () (sequential (check-dir "src")))
(deftask release () (sequential (check-all) "done"))
(define e (try (release) (catch e e)))
(prn e.message)
(prn e.details.trace)
(prn e.details.cause)
(release)

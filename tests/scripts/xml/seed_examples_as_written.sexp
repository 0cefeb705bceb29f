;; stdout: "Process null"
;; stdout: "Handle success"
;; stdout: "Handle error"
;; stdout: "Handle error"
;; stdout: nil
;; stdout: ("result")
;; stdout: "success_handler" "error_handler"
;; stdout: true nil
;; stdout: "invalid expression in <code>: a map literal needs an even number of forms (key value …)"
; The seeds' XML examples, copied as they are written. A file whose one <task> has no
; name is named after the file; a file whose root is <cond> is a task named after the
; file, whose one input `result` is what its cases test. (The step without
; <output_format type="json"> leaves parsedContent nil, so process_data sees null.)
(set-provider! (fn (req)
                 (cond ((= req.prompt "Get data") "{\"items\": 3}")
                       (else req.prompt))))
(deftask process_data (data) :prompt "Process {{data}}")
(import "templates/seeds/as_written/automatic_step_results.xml")
(prn (get (automatic_step_results) "content"))
(import "templates/seeds/as_written/handle_result.xml")
(prn (get (handle_result "{\"valid\": true}") "content"))
(prn (get (handle_result {"valid" false "errors" 2}) "content"))
(prn (get (handle_result (task-result "{\"valid\": false, \"errors\": 1}")) "content"))
(prn (get (handle_result {"valid" false "errors" 0}) "parsedContent"))
(prn handle_result.params)
(prn (get (get-task "handle_result/step-0") "subtype") (get (get-task "handle_result/step-1") "subtype"))
; fresh_context: enabled and disabled, as the design documents write it
(import "templates/seeds/as_written/fresh_enabled.xml")
(prn isolated.fresh_context shared.fresh_context)
; the first example of seed 000 holds TypeScript in <code>: tasklisp reads S-expressions
(prn (try (import "templates/seeds/as_written/explicit_binding.xml") (catch e e.message)))

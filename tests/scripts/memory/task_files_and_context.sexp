;; stdout: "Answer from:\n--- fixtures/docs/guide/setup.md ---\n# Setup\n\nInstall the tool, then log in once.\n"
;; stdout: "Context: --- fixtures/docs/billing.md ---\nInvoices are sent on the first day of each month.\nA password is never needed to read an invoice."
;; stdout: ("TASK_FAILURE" "context_retrieval_failure")
;; stdout: "fixtures/docs"
; :files puts the files' text in {{files}}; :context-query (with :context-dir) puts
; get-context's answer in {{context}}; the provider here echoes the prompt
(set-provider! (fn (req) req.prompt))
(deftask read-setup (path) :files [path] :prompt "Answer from:\n{{files}}")
(prn (get (read-setup "fixtures/docs/guide/setup.md") "content"))
(deftask about (topic) :context-query "{{topic}} invoice" :context-dir "fixtures/docs"
  :prompt "Context: {{context}}")
(prn (get (about "monthly") "content"))
(define (failure thunk) (try (thunk) (catch e [e.type e.reason])))
(prn (failure (fn () (read-setup "fixtures/docs/missing.md"))))
(prn about.context_dir)

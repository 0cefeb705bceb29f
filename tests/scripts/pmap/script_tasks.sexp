;; stdout: ("1" "2" "3")
;; stdout: 3
;; stdout: "tool_execution_error"
;; stdout: ("x" "y")
(set-provider! "echo") ; the prompt comes back as the answer
(deftask late (n) :command ["sh" "-c" (str "sleep 0." (- 3 n) "; echo " n)])
(prn (pmap (fn (r) (string-trim r.content)) (pmap late [1 2 3] :concurrency 3)))
(deftask exit-with (n) :command ["sh" "-c" (str "sleep 0.1; exit " n)])
(define e (try (pmap exit-with [0 0 3 0 5] :concurrency 5) (catch e e)))
(prn e.details.script_exit_code)
(prn e.reason)
(deftask shout (text) :prompt "{{text}}")
(prn (map (fn (r) r.content) (pmap shout ["x" "y"])))

;; stdout: "3"
;; stdout: "hi Ada"
;; stdout: "ABC"
;; stdout: "$(id -u); touch /tmp/tasklisp-injected-marker\n"
;; stdout: {"n" 3}
;; stdout: ""
;; stdout: 0
;; stdout: "tool_execution_error"
;; stdout: 3
;; stdout: "out"
;; stdout: "oops\n"
;; stdout: "script"
;; stdout: 5.0
;; error: TASK_FAILURE tool_execution_error exited with status 3
(deftask count-words (text) :command ["wc" "-w"] :stdin text)
(prn (string-trim (get (count-words "a b c") "content")))
(deftask greet (name) :command ["sh" "-c" "echo hi $WHO"] :env {"WHO" name})
(prn (string-trim (get (greet "Ada") "content")))
(deftask upper (text) :command (str "printf '%s' " text " | tr a-z A-Z") :shell true)
(prn (get (upper "abc") "content"))
(deftask say (x) :command ["echo \"$1\"" x] :shell true)
(prn (get (say "$(id -u); touch /tmp/tasklisp-injected-marker") "content"))
(deftask numbers () :command ["echo" "{\"n\": 3}"] :output "json" :timeout 5)
(define r (numbers))
(prn r.parsedContent)
(prn r.notes.stderr)
(prn r.notes.exitCode)
(deftask boom () :command ["sh" "-c" "echo out; echo oops >&2; exit 3"])
(define e (try (boom) (catch e e)))
(prn e.reason)
(prn e.details.script_exit_code)
(prn (string-trim e.details.script_stdout))
(prn e.details.script_stderr)
(prn boom.type)
(prn numbers.timeout)
(boom)

;; stdout: {"content" "[1,{\"a\":2}]" "status" "COMPLETE" "parsedContent" (1 {"a" 2}) "notes" {"task" "data"}}
;; stdout: {"content" "plain" "status" "COMPLETE" "parsedContent" "plain" "notes" {"task" "text"}}
;; stdout: "null"
;; stdout: "inner"
;; stdout: "inner"
;; stdout: "task-result"
;; stdout: "map"
;; stdout: "boom"
;; stdout: "llm_error"
(deftask data () [1 {"a" 2}])
(prn (data))
(deftask text () "plain")
(prn (text))
(deftask nothing () nil)
(prn (get (nothing) "content"))
; a TaskResult from the body is returned with this task as its producer
(set-provider! (fn (req) "inner"))
(deftask inner () :prompt "x")
(deftask outer () (inner))
(prn (get (outer) "content"))
; a returned TaskResult is returned as it is: it names the task that produced it
(prn (get-in (outer) ["notes" "task"]))
(prn (symbol->string (type-of (outer))))
; a map with the same keys is plain data
(prn (symbol->string (type-of {"content" "x" "status" "COMPLETE" "parsedContent" nil "notes" {}})))
; an error raised inside a task propagates unchanged
(deftask failing () (fail :llm_error "boom"))
(prn (try (failing) (catch e e.message)))
(prn (try (failing) (catch e e.reason)))

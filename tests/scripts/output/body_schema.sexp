;; stdout: 3
;; stdout: "output_format_failure"
;; stdout: "Expected output of type \"array\" but got \"object\" — the answer: {\"n\":3}"
;; stdout: {"n" 3}
;; stdout: ("coerced /n: string → integer")
;; stdout: "reviewed"
; :schema on a body or sequential task checks the body's result.
(deftask counts () :schema {"type" "object" "properties" {"n" {"type" "integer"}}} {"n" 3})
(prn (get-in (counts) ["parsedContent" "n"]))
(deftask listed () :schema "array" {"n" 3})
(define e (try (listed) (catch e e)))
(prn e.reason)
(prn e.message)
(deftask texty () :schema {"type" "object" "properties" {"n" {"type" "integer"}}} "{\"n\": \"3\"}")
(define t (texty))
(prn t.parsedContent)
(prn t.notes.repairs)
; a body that returns a TaskResult returns it as it is
(deftask review () (task-result "reviewed" :status "COMPLETE"))
(prn (get (review) "content"))

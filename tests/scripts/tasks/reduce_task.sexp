;; stdout: "abc"
;; stdout: "join2"
;; stdout: ("a" "b" "c")
;; stdout: {"content" "" "status" "COMPLETE" "parsedContent" "" "notes" {"task" "reduce-task"}}
;; stdout: 6
;; stdout: "6"
(set-provider! (fn (req) req.prompt))
(deftask join2 (acc item) :prompt "{{acc}}{{item}}")
(define r (reduce-task join2 "" ["a" "b" "c"]))
(prn r.content)
(prn r.notes.task)
; a JSON task accumulates parsedContent
(set-provider! (fn (req) (json-stringify (append req.params.acc [req.params.item]))))
(deftask collect (acc item) :prompt "{{acc}} {{item}}" :output "json")
(prn (get (reduce-task collect [] ["a" "b" "c"]) "parsedContent"))
(prn (reduce-task join2 "" []))
; any procedure works; plain data is wrapped
(define sum (reduce-task (fn (acc x) (+ acc x)) 0 [1 2 3]))
(prn sum.parsedContent)
(prn sum.content)

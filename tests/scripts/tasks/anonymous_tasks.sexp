;; stdout: "<bug: crash>"
;; stdout: "<feature: button>"
;; stdout: true "task_anonymous_tasks_17" false
;; stdout: ("<bug: a>" "<bug: b>")
;; stdout: ("<feature: c>" "<feature: d>")
;; stdout: ()
;; stdout: "L/X/caller"
;; stdout: "L/X/local"
;; stdout: "L/X/caller"
;; stdout: "got 7" ({"name" "task_anonymous_tasks_35" "arguments" {"a" 2} "result" 7})
;; stdout: 1 2 "plain"
;; stdout: "SYNTAX_ERROR" ":replace is an option of deftask: an anonymous task is not registered"
;; stdout: "SYNTAX_ERROR" "bad syntax: expected (task (params…) :option value… body…)"
; Seed 004, phase 3: tasks made by functions, whose templates see the factory's bindings.
(define (model request) (str "<" request.prompt ">"))
(set-provider! model)
(define (make-labeler label) (task (text) :prompt "{{label}}: {{text}}"))
(define bug (make-labeler "bug"))
(define feature (make-labeler "feature"))
(prn (get (bug "crash") "content"))
(prn (get (feature "button") "content"))
(prn (task? bug) bug.name (eq? bug feature))
(prn (map (fn (r) r.content) (map bug ["a" "b"])))
(prn (map (fn (r) r.content) (pmap feature ["c" "d"])))
; registered nowhere
(prn (task-names))
; a body sees the factory's bindings first, then the caller's (:inherit-context "full")
(define where "caller")
(define (mk label) (task (x) (str label "/" x "/" where)))
(prn (get ((mk "L") "X") "content"))
(prn (let ((where "local")) (get ((mk "L") "X") "content")))
(define (mk-none label) (task (x) :inherit-context "none" (str label "/" x "/" where)))
(prn (let ((where "local")) (get ((mk-none "L") "X") "content")))
; offered as a tool
(define (adder k) (task (a) :description "adds k" :param-types {"a" "integer"} (+ a k)))
(define add5 (adder 5))
(define (tool-model request)
  (if (= (get (last request.messages) "role") "user")
      {"tool_calls" [{"id" "c1" "name" (get (first request.tools) "name") "arguments" {"a" 2}}]}
      (str "got " (get (nth request.messages 2) "content"))))
(set-provider! tool-model)
(deftask calc (q) :prompt "{{q}}" :tools [add5])
(define r (calc "go"))
(prn r.content r.notes.toolCalls)
; `task` is special only as an operator
(prn (let ((task 1)) task) (let ((task (fn (x) x))) (task 2)) (begin (define task "plain") task))
(define (refusal code) (try (eval (read code)) (catch e [e.type e.message])))
(apply prn (refusal "(task (x) :replace true :prompt \"{{x}}\")"))
(apply prn (refusal "(task)"))

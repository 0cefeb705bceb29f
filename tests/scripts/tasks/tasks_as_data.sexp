;; stdout: ("name" "type" "subtype" "description" "params" "defaults" "template" "isatomic" "metadata")
;; stdout: ("rate" "atomic" "evaluator" "Rates a text" ("text" "scale") {"scale" 5} "Rate {{text}} out of {{scale}}" true)
;; stdout: {"scale" 5} "Rate {{text}} out of {{scale}}" true
;; stdout: nil false {} "composite"
;; stdout: true false
;; stdout: ("atomic" "script" "composite")
;; stdout: {"evaluator" {"rate" #<task rate>} "none" {"ask" #<task ask>}}
;; stdout: #<task tidy> #<task rate> #<task rate> nil
;; stdout: {} {}
;; stdout: ("rate" "ask")
;; stdout: {"y" 2 "x" 1}
;; stdout: 2 1 #<task-library> #<task rate> nil
;; stdout: {}
;; stdout: {"text" "hi"}
; Seed 004: a TaskDefinition read as data, the TaskLibrary as {type {subtype {name task}}}.
(set-provider! (fn (request) request.prompt))
(deftask rate (text (scale 5)) :description "Rates a text" :subtype "evaluator"
  :prompt "Rate {{text}} out of {{scale}}")
(deftask ask (q) :prompt "{{q}}")
(deftask count-words (path) :command ["wc" "-w" path])
(deftask tidy (text) (string-trim text))
(prn (keys rate))
(prn (take (values rate) 8))
(prn rate.defaults rate.template rate.isatomic)
(prn tidy.template tidy.isatomic tidy.defaults (get tidy "type"))
(prn (has-key? rate "isatomic") (has-key? rate "model"))
(prn (keys taskLibrary))
(prn taskLibrary.atomic)
(prn taskLibrary.composite.none.tidy taskLibrary.rate (get-in taskLibrary ["atomic" "evaluator" "rate"]) taskLibrary.nobody)
; a type with no task reads as empty
(prn taskLibrary.reduce (get taskLibrary "sequential"))
(prn (map (fn (t) t.name) (apply append (map values (values taskLibrary.atomic)))))
; seed 004's Env: the innermost frames' bindings, and Env.find
(define (scope-of x) (let ((y (* x 2)) (x x)) (current-environment)))
(prn (scope-of 1))
(define env (scope-of 1))
(prn (env-find env "y") (env-find env "x") (env-find env "taskLibrary") (env-find env "rate") (env-find env "nowhere"))
(prn (current-environment))
(deftask show-env (text) (current-environment))
(prn (get (show-env "hi") "parsedContent"))

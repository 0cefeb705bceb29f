;; stdout: "VALIDATION_ERROR" "`cond` is a special form and cannot name a task: choose another name"
;; stdout: "VALIDATION_ERROR" "`let` is a special form and cannot name a task: choose another name"
;; stdout: "VALIDATION_ERROR" "`task` is a special form and cannot name a task: choose another name"
;; stdout: "VALIDATION_ERROR"
;; stdout: 2
;; stdout: "plain"
; no task may take a special form's name, not even one a program may redefine
(define (refusal code) (try (eval (read code)) (catch e [e.type e.message])))
(apply prn (refusal "(deftask cond (x) :prompt \"{{x}}\")"))
(apply prn (refusal "(task-alias \"let\" \"draft\")"))
(apply prn (refusal "(deftask task (x) :prompt \"{{x}}\")"))
; a template file named after a form, with no name of its own, is refused at import
(prn (first (refusal "(import \"fixtures/cond.xml\")")))
; `cond` is still the language's own, and `task` stays a legal variable name
(prn (cond ((= 1 2) 1) (else 2)))
(define task "plain")
(prn task)

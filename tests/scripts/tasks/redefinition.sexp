;; stdout: "Hello, Ada!" "Hi, Ada!"
;; stdout: "3"
;; stdout: "VALIDATION_ERROR" "task `greeter` is already registered (in redefinition.sexp)"
;; stdout: "Yo, Ada"
;; stdout: "VALIDATION_ERROR" true
;; stdout: "VALIDATION_ERROR" "`atomic` is a task type and cannot name a task: choose another name"
;; stdout: "VALIDATION_ERROR" "`composite` is a task type and cannot name a task: choose another name"
;; stdout: "VALIDATION_ERROR" "`director_evaluator_loop` is a task type and cannot name a task: choose another name"
; A deftask in a function called twice, or in a loop, replaces the task it made before.
(set-provider! (fn (request) request.prompt))
(define (make-greeter greeting)
  (deftask greeter (name) :prompt (str greeting ", {{name}}!"))
  greeter)
(prn (get ((make-greeter "Hello") "Ada") "content") (get ((make-greeter "Hi") "Ada") "content"))
(for-each (fn (n) (deftask counter () :prompt (str n))) [1 2 3])
(prn (get (counter) "content"))
; another definition of the name is refused, unless it says :replace true
(define (refusal code) (try (eval (read code)) (catch e [e.type e.message])))
(apply prn (refusal "(deftask greeter (name) :prompt \"Yo\")"))
(deftask greeter (name) :replace true :prompt "Yo, {{name}}")
(prn (get (greeter "Ada") "content"))
(prn (first (refusal "(deftask greeter (name) :replace 1 :prompt \"x\")"))
     (string-contains? (second (refusal "(deftask greeter (name) :replace 1 :prompt \"x\")")) ":replace must be true or false"))
; a task type's name is no task's
(apply prn (refusal "(deftask atomic (x) :prompt \"{{x}}\")"))
(apply prn (refusal "(task-alias \"composite\" \"greeter\")"))
(apply prn (refusal "(deftask director_evaluator_loop (x) (str x))"))

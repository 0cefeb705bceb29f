;; stdout: "VALIDATION_ERROR"
;; stdout: ":output must be \"json\" or \"text\" (\"json\" with :schema) (got \"xml\")"
;; stdout: ":inherit-context must be \"full\", \"none\" or \"subset\" (got \"some\")"
;; stdout: ":type must be atomic with :prompt, script with :command, or sequential, reduce or composite with a body (got \"script\")"
;; stdout: ":retries must be an integer of at least 0 (got -1)"
;; stdout: ":audits must be a procedure or a list of procedures (got (1))"
;; stdout: ":timeout must be a positive number of seconds (got 0)"
;; stdout: "reduce"
;; error: SYNTAX_ERROR unknown deftask option :promt
(define (kind-of thunk) (try (thunk) (catch e e.type)))
(define (message-of thunk) (try (thunk) (catch e e.message)))
(prn (kind-of (fn () (deftask a () :prompt "x" :output "xml"))))
(prn (message-of (fn () (deftask a () :prompt "x" :output "xml"))))
(prn (message-of (fn () (deftask a () :prompt "x" :inherit-context "some"))))
(prn (message-of (fn () (deftask a () :prompt "x" :type "script"))))
(prn (message-of (fn () (deftask a () :prompt "x" :retries -1))))
(prn (message-of (fn () (deftask a () :prompt "x" :audits [1]))))
(prn (message-of (fn () (deftask a () :command ["true"] :timeout 0))))
(deftask joined (items) :type "reduce" (reduce-task (fn (acc x) (str acc x)) "" items))
(prn joined.type)
(deftask typo () :promt "x")

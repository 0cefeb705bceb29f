;; stdout: "VALIDATION_ERROR"
;; stdout: ":output must be \"json\" or \"text\" (\"json\" with :schema) (got \"xml\")"
;; stdout: ":inherit-context must be \"full\", \"none\" or \"subset\" (got \"some\")"
;; stdout: ":type must be atomic with :prompt, script with :command, or sequential, reduce, director_evaluator_loop or composite with a body (got \"script\")"
;; stdout: ":retries must be an integer from 0 to 1000 (got -1)"
;; stdout: ":max-turns must be an integer from 1 to 10000 (got 100000000000)"
;; stdout: ":audits must be a procedure or a list of procedures (got (1))"
;; stdout: ":timeout must be a number of seconds above 0 and at most 1e9 (got 0)"
;; stdout: ":timeout must be a number of seconds above 0 and at most 1e9 (got 1e19)"
;; stdout: ":timeout must be a number of seconds above 0 and at most 1e9 (got NaN)"
;; stdout: "reduce"
;; error: SYNTAX_ERROR unknown deftask option :promt
(define (kind-of thunk) (try (thunk) (catch e e.type)))
(define (message-of thunk) (try (thunk) (catch e e.message)))
(prn (kind-of (fn () (deftask a () :prompt "x" :output "xml"))))
(prn (message-of (fn () (deftask a () :prompt "x" :output "xml"))))
(prn (message-of (fn () (deftask a () :prompt "x" :inherit-context "some"))))
(prn (message-of (fn () (deftask a () :prompt "x" :type "script"))))
(prn (message-of (fn () (deftask a () :prompt "x" :retries -1))))
(prn (message-of (fn () (deftask a () :prompt "x" :max-turns 100000000000))))
(prn (message-of (fn () (deftask a () :prompt "x" :audits [1]))))
(prn (message-of (fn () (deftask a () :command ["true"] :timeout 0))))
(prn (message-of (fn () (deftask t () :prompt "hi" :timeout 1e19))))
(prn (message-of (fn () (deftask t () :prompt "hi" :timeout (/ 0.0 0.0)))))
(deftask joined (items) :type "reduce" (reduce-task (fn (acc x) (str acc x)) "" items))
(prn joined.type)
(deftask typo () :promt "x")

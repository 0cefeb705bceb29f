;; stdout: "input_validation_failure"
;; stdout: "task `t`: missing required argument `a`"
;; stdout: "task `t`: unknown named argument :c"
;; stdout: "task `t`: too many arguments: it takes 2 and argument 3 is extra: 3"
;; stdout: "task `t`: argument `a` is given twice"
;; stdout: "task `t`: named argument :b has no value"
;; error: TASK_FAILURE input_validation_failure missing required argument
(deftask t (a (b 2)) (list a b))
(prn (try (t) (catch e e.reason)))
(prn (try (t) (catch e e.message)))
(prn (try (t 1 :c 3) (catch e e.message)))
(prn (try (t 1 2 3) (catch e e.message)))
(prn (try (t 1 :a 1) (catch e e.message)))
(prn (try (t 1 :b) (catch e e.message)))
(t :b 1)

;; error: VALIDATION_ERROR `deftask` is a special form and cannot name a task
(deftask deftask (x) :prompt "{{x}}")

;; error: SYNTAX_ERROR `deftask` is a special form and cannot be redefined
(deftask deftask (x) :prompt "{{x}}")

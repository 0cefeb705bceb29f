;; error: VALIDATION_ERROR task `greet` duplicate_with_deftask.sexp basic.xml
(deftask greet (who) :prompt "Hi {{who}}")
(import "templates/basic.xml")

;; stdout: "x={{y}} y=2"
;; stdout: "user Ada is 36; tags [\"a\",\"b\"]; nothing null"
;; stdout: "literal {{ two words }} and {{}}"
;; stdout: "input_validation_failure"
;; stdout: "template tag {{nobody}} names an unbound symbol: nobody"
;; stdout: "input_validation_failure"
(set-provider! (fn (req) req.prompt))
(deftask show (x y) :prompt "x={{x}} y={{ y }}")
; what a tag inserts is never substituted again
(prn (get (show "{{y}}" 2) "content"))
(deftask profile (user) :prompt "user {{user.name}} is {{user.age}}; tags {{user.tags}}; nothing {{user.none}}")
(prn (get (profile {"name" "Ada" "age" 36 "tags" ["a" "b"]}) "content"))
(deftask literal () :prompt "literal {{ two words }} and {{}}")
(prn (get (literal) "content"))
(deftask lost () :prompt "hello {{nobody}}")
(prn (try (lost) (catch e e.reason)))
(prn (try (lost) (catch e e.message)))
(deftask deep (m) :prompt "{{m.a.b}}")
(prn (try (deep {"a" nil}) (catch e e.reason)))

;; stdout: "x={{y}} y=2"
;; stdout: "user Ada is 36; tags [\"a\",\"b\"]; nothing null"
;; stdout: "literal {{ two words }} and {{}}"
;; stdout: "input_validation_failure"
;; stdout: "template tag {{nobody}} names an unbound symbol: nobody"
;; stdout: "input_validation_failure"
;; stdout: "é2ü {{x"
;; stdout: "template tag {{é}} names an unbound symbol: é"
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
; text around tags is kept as it is, whatever its characters
(deftask accents (m) :prompt "é{{ m.u[1] }}ü {{x")
(prn (get (accents {"u" [1 2]}) "content"))
(deftask unbound-accent () :prompt "{{ é }}")
(prn (try (unbound-accent) (catch e e.message)))

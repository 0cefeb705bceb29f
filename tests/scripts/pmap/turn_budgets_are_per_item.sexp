;; stdout: ({"content" "ok a" "status" "COMPLETE" "parsedContent" "ok a" "notes" {"task" "late"}} "ok b" "ok c" "ok d")
;; stdout: ("ok x" "ok y")
;; stdout: "item 2: task `outer` allows 2 turns (:max-turns)"
;; A task's :max-turns counts its own turns, not those its sibling pmap items take while
;; it waits; and the siblings are not held to it.
(define (provider req) (str "ok " req.prompt))
(set-provider! provider)
(deftask plain (x) :prompt "{{x}}")
(deftask late (x) :max-turns 1 (sleep 0.2) (get (plain x) "content"))
(prn (pmap (fn (x) (if (= x "a") (late x) (get (plain x) "content")))
           ["a" "b" "c" "d"]
           :concurrency 4))
; items started inside a task count against its budget: two fit, three do not
(deftask outer (xs) :max-turns 2 (pmap (fn (x) (get (plain x) "content")) xs))
(prn (get (outer ["x" "y"]) "parsedContent"))
(prn (get (try (outer ["x" "y" "z"]) (catch e e)) "message"))

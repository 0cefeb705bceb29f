;; stdout: {"value" 3 "output" "hi"}
;; stdout: "unbound symbol: secret"
;; stdout: {"value" 8 "output" ""}
;; stdout: "#<procedure>"
;; stdout: 42
;; stdout: ("permission_denied" "(getenv \"HOME\")")
;; stdout: "reading the environment variable HOME is not allowed in the sandbox: give it :allow {\"env\" [\"HOME\"]} to allow it (within the caller's own)"
;; stdout: ("RESOURCE_EXHAUSTION" "fuel" 1000)
;; stdout: {"value" "COMPLETE" "output" ""}
;; stdout: "template_not_found"
;; stdout: true
;; stdout: "eval-sandboxed: unknown capability \"disk\" in :allow (exec, read, write, env, provider, net)"
; a fresh environment: the prelude and builtins, the tasks and bindings given, nothing
; else of the caller's; output captured; values copied out
(prn (eval-sandboxed "(print \"hi\") (+ 1 2)"))
(define secret 42)
(prn (try (eval-sandboxed "secret") (catch e e.message)))
(prn (eval-sandboxed '(* secret 2) :env {"secret" 4}))
; a procedure made inside comes out as its text: nothing closes over the sandbox
(prn (get (eval-sandboxed "(fn (x) (* x secret))") "value"))
; and the caller's own definitions are untouched by the child's
(eval-sandboxed "(define secret 0) (define + -)")
(prn (+ secret 0))
(prn (try (eval-sandboxed "(getenv \"HOME\")") (catch e [e.reason e.details.code])))
(prn (try (eval-sandboxed "(getenv \"HOME\")") (catch e e.message)))
(prn (try (eval-sandboxed "(define (spin) (spin)) (spin)" :fuel 1000)
          (catch e [e.type e.details.resource e.details.limit])))
; named tasks are the only tasks it sees
(deftask shout (x) (string-upcase x))
(prn (eval-sandboxed "(get (shout \"a\") \"status\")" :tasks ["shout"]))
(prn (try (eval-sandboxed "(get-task \"shout\")") (catch e e.reason)))
(prn (empty? (check-code "(shout \"a\")" :tasks [shout])))
(prn (try (eval-sandboxed "1" :allow {"disk" ["/"]}) (catch e e.message)))

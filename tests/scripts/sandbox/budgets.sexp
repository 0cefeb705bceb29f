;; stdout: 2
;; stdout: ("RESOURCE_EXHAUSTION" "budget" "calls")
;; stdout: 3
; the model calls sandboxed code makes go through the caller's session and count
; against the caller's spending and budgets
(set-provider! (fn (req) "ok"))
(deftask ask (q) :prompt "{{q}}")
(eval-sandboxed "(ask \"a\") (ask \"b\")" :tasks ["ask"])
(prn (get (run-usage) "calls"))
(prn (try (with-budget {"calls" 1}
            (eval-sandboxed "(ask \"a\") (ask \"b\")" :tasks ["ask"]))
          (catch e [e.type e.details.resource e.details.unit])))
(prn (get (run-usage) "calls"))

;; stdout: 2 calls, then
;; stdout: budget calls 2 2
;; stdout: inner: budget calls 1 1
;; stdout: outer: budget calls 3 3
;; stdout: pmap: budget calls 3 3
;; stdout: {"calls" 8 "input_tokens" 8 "output_tokens" 8 "cost" 0.0}
;; stdout: with-budget: unknown limit "dollars": the limits are "usd", "tokens" and "calls"
;; stdout: tokens: budget tokens 4 3
(set-provider! "echo") ; the prompt comes back as the answer
(deftask ask (q) :prompt "Q {{q}}")
(define (summary e) (str "budget " e.details.unit " " e.details.used " " e.details.limit))
;; The third call would start past a budget of two.
(println (try (with-budget {"calls" 2} (ask "a") (ask "b") (println "2 calls, then") (ask "c") "not reached")
              (catch e (summary e))))
;; Budgets nest: the inner one stops its second call, the outer one its fourth.
(println (try (with-budget {"calls" 3}
                (println (str "inner: " (try (with-budget {"calls" 1} (ask "a") (ask "b")) (catch e (summary e)))))
                (ask "c") (ask "d") (ask "e"))
              (catch e (str "outer: " (summary e)))))
;; pmap items share the budget around them.
(println (try (with-budget {"calls" 3} (pmap ask ["a" "b" "c" "d" "e" "f"] :concurrency 2))
              (catch e (str "pmap: " (summary e)))))
(println (run-usage))
(println (try (with-budget {"dollars" 1} (ask "a")) (catch e e.message)))
;; Tokens and dollars are known once a call ends: the call after the one that reached
;; the limit is stopped. (The echo provider's answers count about 1 token each way.)
(println (try (with-budget {"tokens" 3} (ask "a") (ask "b") (ask "c")) (catch e (str "tokens: " (summary e)))))

;; A code agent, offline: the model writes tasklisp, each answer is checked before it
;; runs and runs in a sandbox with only the tools it is given.
;;
;;   tasklisp run examples/code_agent.sexp       ; the stand-in model below
;;   tasklisp test examples/code_agent.sexp      ; its tests
;;
;; With a real model, drop the `set-provider!` and run with `--provider openai` (or a
;; llama.cpp server, which gets a grammar of tasklisp's syntax so every answer reads).

(deftask stock (item)
  :description "How many of an item are in stock"
  (get {"apples" 12 "pears" 30} item 0))

(deftask price (item)
  :description "The price of one item, in cents"
  (get {"apples" 40 "pears" 55} item 0))

;; The stand-in model answers step by step as a model would: its first answer uses a
;; name that is bound nowhere, and is sent back with the problem without running.
(define answers
  ["(define total (* (stock \"apples\") (price \"apples\")))\n(print totl)"
   "```lisp\n(define (worth item) (* (get (stock item) \"parsedContent\") (get (price item) \"parsedContent\")))\n(print (worth \"apples\") (worth \"pears\"))\n```"
   "(final-answer {\"apples\" (worth \"apples\") \"pears\" (worth \"pears\")})"])

(set-provider! (fn (request) (nth answers (- request.round 1))))

(define (stock-value)
  (code-agent "What is the stock of apples and of pears worth, in cents?"
              :tools [stock price]
              :max-steps 5))

(define result (stock-value))
(println "answer:" result.content)
(for-each (fn (step)
            (println "step" (get step "step") "-"
                     (if (empty? (get step "problems"))
                         (str "printed " (get step "output"))
                         (str "sent back: " (get (first (get step "problems")) "message")))))
          result.notes.steps)

(deftest the-agent-values-the-stock
  (define r (stock-value))
  (expect= r.status "COMPLETE")
  (expect= r.parsedContent {"apples" 480 "pears" 1650})
  (expect= r.notes.iterations 3))

(deftest the-first-answer-never-runs
  (define first-step (first (get-in (stock-value) ["notes" "steps"])))
  (expect= (get (first (get first-step "problems")) "kind") "unbound")
  (expect (nil? (get first-step "output"))))

(deftest the-plan-cannot-open-doors
  (expect-error (eval-sandboxed "(write-file \"stolen.txt\" \"x\")") "permission_denied"))

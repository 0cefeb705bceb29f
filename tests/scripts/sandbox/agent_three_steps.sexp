;; stdout: "COMPLETE"
;; stdout: 42
;; stdout: "42"
;; stdout: 3
;; stdout: (nil n 42)
;; stdout: ("21" "" "")
; code-agent reaches its goal in three steps: a tool call, a definition that carries
; into the next step, then the final answer
(deftask lookup (key) :description "Looks a fact up" :prompt "fact: {{key}}")
(define answers
  {"1" "(define fact (get (lookup \"answer\") \"content\"))\n(print fact)"
   "2" "Doubling it:\n```lisp\n(define n (* 2 (string->number fact)))\n```"
   "3" "(final-answer n)"})
; The provider answers the agent with code and the tool with a fact. (Called from the
; sandboxed code, it sees the sandbox's globals: it uses none of the program's.)
(set-provider!
  (fn (req)
    (if (= req.task "code-agent") (get answers (str req.round)) "21")))
(define r (code-agent "What is twice the answer?" :tools [lookup] :max-steps 5))
(prn r.status)
(prn r.parsedContent)
(prn r.content)
(prn r.notes.iterations)
(prn (map (fn (s) (get s "value")) r.notes.steps))
(prn (map (fn (s) (get s "output")) r.notes.steps))

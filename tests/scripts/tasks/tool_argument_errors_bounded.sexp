;; stdout: (1022 239)
;; stdout: ("invalid arguments: \"a\" is a required property; \"b\" is a requ" "the arguments must be a JSON object, not [0,1,2,3,4,5,6,7,8,")
; What a bad tool call is told is cut to 1 KiB, however many keys or items it sent.
(deftask add (a b) :param-types {"a" "integer" "b" "integer"} (+ a b))
(deftask calc (q) :prompt "{{q}}" :tools [add])
(define extra (apply hash-map (apply append (map (fn (i) [(str "key" i) i]) (range 5000)))))
(define (asking request)
  (if (= (get (last request.messages) "role") "user")
      {"tool_calls" [{"name" "add" "arguments" extra} {"name" "add" "arguments" (range 5000)}]}
      "gave up"))
(define errors (map (fn (c) c.error) (get-in (with-provider asking (calc "x")) ["notes" "toolCalls"])))
(prn (map length errors))
(prn (map (fn (e) (substring e 0 60)) errors))

;; stdout: "the answer looks truncated: it ends inside a JSON value"
;; stdout: "the answer looks truncated: it ends inside a JSON value"
;; stdout: "the answer holds more than one JSON value"
;; stdout: "expected value at line 1 column 1"
;; stdout: nil
;; stdout: "expected value at line 1 column 1"
;; stdout: true
; What is not repaired: a cut-off answer, two values, plain prose; and with
; :strict-json nothing is repaired at all.
(define answer "")
(set-provider! (fn (req) answer))
(deftask ask () :prompt "go" :output "json")
(define (parse-error text)
  (set! answer text)
  (get-in (ask) ["notes" "parseError"]))
(prn (parse-error "{\"items\": [1, 2, 3"))
(prn (parse-error "Sure: {\"items\": [1, 2"))
(prn (parse-error "{\"a\": 1}\n{\"b\": 2}"))
(prn (parse-error "I would rather not say."))
(deftask strict () :prompt "go" :output "json" :strict-json true)
(set! answer "{\"a\": 1}")
(prn (get-in (strict) ["notes" "repairs"]))
(set! answer "```json\n{\"a\": 1}\n```")
(prn (get-in (strict) ["notes" "parseError"]))
(set! answer "{\"a\": 1,}")
(prn (nil? (get (strict) "parsedContent")))

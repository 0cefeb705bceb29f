;; stdout: "output_format_failure"
;; stdout: "Expected output of type \"integer\" but got \"string\" at \"/age\" — the answer: {\"age\": \"old\"}"
;; stdout: "{\"age\": \"old\"}"
;; stdout: "procedure"
;; stdout: "tiny-1"
;; stdout: "person"
;; stdout: 1
;; stdout: "integer"
;; stdout: "string"
;; stdout: "/age"
;; stdout: ({"pointer" "/age" "message" "\"old\" is not of type \"integer\""})
;; stdout: 200
;; stdout: true
;; stdout: "invalid JSON"
;; stdout: true
; A failed answer shows the answer: its whole text and who gave it in the details,
; its first 200 characters at the end of the message.
(define answer "{\"age\": \"old\"}")
(set-provider! (fn (req) answer))
(deftask person () :prompt "go" :model "tiny-1"
  :schema {"type" "object" "properties" {"age" {"type" "integer"}}})
(define e (try (person) (catch e e)))
(prn e.reason)
(prn e.message)
(prn e.details.content)
(prn e.details.provider)
(prn e.details.model)
(prn e.details.task)
(prn e.details.round)
(prn e.details.expectedType)
(prn e.details.actualType)
(prn e.details.location)
(prn e.details.errors)
; a long answer: the message ends with its first 200 characters, the details hold it all
(set! answer (str "Well, " (apply str (map (fn (i) "x") (range 300)))))
(define long (try (person) (catch e e)))
(prn (length (last (string-split long.message "the answer: "))))
(prn (= long.details.content answer))
(prn long.details.actualType)
(prn (string-ends-with? long.message (substring answer 0 200)))

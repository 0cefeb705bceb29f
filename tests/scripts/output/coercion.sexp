;; stdout: {"age" 42 "score" 2.5 "ok" true "tags" ("x") "label" "bug"}
;; stdout: ("coerced /age: string → integer" "coerced /score: string → number" "coerced /ok: string → boolean" "coerced /tags: string → array" "coerced /label: \" Bug \" → \"bug\"")
;; stdout: "output_format_failure"
;; stdout: ({"pointer" "/age" "message" "\"4.5\" is not of type \"integer\""} {"pointer" "/ok" "message" "\"yes\" is not of type \"boolean\""})
; Against a JSON-Schema map, values that convert without loss are converted and named.
(define answer "{\"age\": \"42\", \"score\": \" 2.5\", \"ok\": \"true\", \"tags\": \"x\", \"label\": \" Bug \"}")
(set-provider! (fn (req) answer))
(deftask profile () :prompt "go"
  :schema {"type" "object"
           "properties" {"age" {"type" "integer"} "score" {"type" "number"}
                         "ok" {"type" "boolean"} "tags" {"type" "array" "items" {"type" "string"}}
                         "label" {"enum" ["bug" "feature"]}}})
(define r (profile))
(prn r.parsedContent)
(prn r.notes.repairs)
; anything that would lose information is a mismatch, every problem listed
(set! answer "{\"age\": \"4.5\", \"ok\": \"yes\"}")
(define e (try (profile) (catch e e)))
(prn e.reason)
(prn e.details.errors)

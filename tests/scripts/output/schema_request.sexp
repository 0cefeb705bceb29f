;; stdout: {"type" "object" "properties" {"label" {"type" "string"}} "required" ("label")}
;; stdout: "object"
;; stdout: nil
;; stdout: "CONTINUATION"
;; stdout: {"score" 0.4}
; A procedure provider finds the task's schema as request.schema.
(define seen nil)
(set-provider! (fn (req) (set! seen req.schema) "{\"label\": \"bug\"}"))
(deftask classify (text) :prompt "Classify {{text}}"
  :schema {"type" "object" "properties" {"label" {"type" "string"}} "required" ["label"]})
(classify "crash")
(prn seen)
(deftask any-object () :prompt "go" :schema "object")
(any-object)
(prn seen)
(deftask plain () :prompt "go")
(plain)
(prn seen)
; a provider's status and criteria are kept in the result
(set-provider! (fn (req) {"content" "partial" "status" "CONTINUATION" "criteria" {"score" 0.4}}))
(define r (plain))
(prn r.status)
(prn r.criteria)

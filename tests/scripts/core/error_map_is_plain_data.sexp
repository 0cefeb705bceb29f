;; stdout: true true true
;; stdout: "{\"type\":\"EVAL_ERROR\",\"message\":\"x\",\"details\":{}}"
(define e (try (error "x") (catch err err)))
(prn (map? e) (has-key? e "type") (has-key? e "details"))
(prn (json-stringify (dissoc e "location")))

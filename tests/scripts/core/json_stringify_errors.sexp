;; stdout: "cannot represent NaN in JSON"
;; stdout: "cannot convert a procedure to JSON"
;; error: EVAL_ERROR cannot convert a procedure to JSON

(prn (try (json-stringify (/ 0.0 0.0)) (catch e e.message)))
(prn (try (json-stringify car) (catch e e.message)))
(json-stringify (fn (x) x))

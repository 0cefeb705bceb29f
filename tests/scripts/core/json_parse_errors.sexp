;; stdout: "EVAL_ERROR"
;; stdout: "EVAL_ERROR"
;; stdout: "EVAL_ERROR"
;; error: EVAL_ERROR json-parse

(prn (try (json-parse "[1,") (catch e e.type)))
(prn (try (json-parse "") (catch e e.type)))
(prn (try (json-parse "{'a': 1}") (catch e e.type)))
(json-parse "nope")

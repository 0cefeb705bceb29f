;; stdout: "EVAL_ERROR"
;; stdout: "EVAL_ERROR"
;; stdout: "SYNTAX_ERROR"
;; stdout: "EVAL_ERROR"
(prn (try (undefined-thing) (catch e e.type)))
(prn (try (car 1) (catch e e.type)))
(prn (try (read "(") (catch e e.type)))
(prn (try (json-parse "{") (catch e e.type)))

;; stdout: "division by zero"
;; stdout: inf
;; error: EVAL_ERROR division by zero

(prn (try (/ 1 0) (catch e e.message)))
(prn (/ 1.0 0))
(/ 5 0)

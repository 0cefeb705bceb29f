;; stdout: "division by zero"
;; stdout: "division by zero"
;; error: EVAL_ERROR division by zero

(prn (try (quotient 1 0) (catch e e.message)))
(prn (try (remainder 1 0) (catch e e.message)))
(modulo 1 0)

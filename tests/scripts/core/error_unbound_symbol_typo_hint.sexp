;; stdout: "unbound symbol: lenght"
;; error: EVAL_ERROR unbound symbol: displayln did you mean `println`?
(prn (try (lenght '(1)) (catch e e.message)))
(displayln "x")

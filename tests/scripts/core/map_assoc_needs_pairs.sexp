;; stdout: "assoc: expected at least 3 arguments, got 2"
;; error: EVAL_ERROR assoc: expected a map then keys and values in pairs

(prn (try (assoc {} "a") (catch e e.message)))
(assoc {} "a" 1 "b")

;; stdout: "assertion failed: (= 1 2)"
;; error: EVAL_ERROR custom message

(assert (= 1 1))
(prn (try (assert (= 1 2)) (catch e e.message)))
(assert false "custom message")

;; stdout: "apply: expected at least 2 arguments, got 1"
;; error: EVAL_ERROR apply: expected at least 2 arguments, got 1
(prn (try (apply +) (catch e e.message)))
(define (f) (apply +))
(f)

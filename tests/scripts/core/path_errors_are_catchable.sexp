;; stdout: "invalid array access: xs[5] (length 1)"
;; stdout: "EVAL_ERROR"
(define xs [1])
(prn (try xs[5] (catch e e.message)))
(prn (try xs.k (catch e e.type)))

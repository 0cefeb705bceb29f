;; stdout: 4611686018427387904
;; stdout: "integer overflow"
;; stdout: "EVAL_ERROR"
(prn (expt 2 62))
(prn (try (expt 2 63) (catch e e.message)))
(prn (try (expt 10 100) (catch e e.type)))

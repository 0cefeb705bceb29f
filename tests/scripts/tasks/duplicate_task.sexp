;; stdout: "VALIDATION_ERROR"
;; stdout: "task `t` is already registered (in duplicate_task.sexp)"
;; error: VALIDATION_ERROR already registered
(deftask t () "one")
(prn (try (deftask t () "two") (catch e e.type)))
(prn (try (deftask t () "two") (catch e e.message)))
(deftask t () "three")

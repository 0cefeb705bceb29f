;; stdout: "exit: the status must be 0 to 255, not 256"
;; error: EVAL_ERROR exit: the status must be 0 to 255, not -1

(prn (try (exit 256) (catch e e.message)))
(exit -1)

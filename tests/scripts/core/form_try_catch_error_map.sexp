;; stdout: "EVAL_ERROR" "boom" {}
;; stdout: nil
(define e (try (error "boom") (catch err err)))
(prn e.type e.message e.details)
(prn (get e "reason"))

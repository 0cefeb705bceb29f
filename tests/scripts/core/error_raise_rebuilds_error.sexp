;; stdout: true "TASK_FAILURE" "first"
;; stdout: ("EVAL_ERROR" "plain text")
;; stdout: ("VALIDATION_ERROR" "bad" {"k" 1})
(define caught (try (fail :x "first") (catch e e)))
(define again (try (raise caught) (catch e e)))
(prn (= (get caught "reason") (get again "reason")) again.type again.message)
(prn (try (raise "plain text") (catch e (list e.type e.message))))
(prn (try (raise {"type" "VALIDATION_ERROR" "message" "bad" "details" {"k" 1}}) (catch e (list e.type e.message e.details))))

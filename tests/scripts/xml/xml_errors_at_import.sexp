;; stdout: "XML_PARSE_ERROR"
;; stdout: 4
;; stdout: ("uses_missing")
;; stdout: "TASK_FAILURE" "subtask_failure"
;; stdout: "VALIDATION_ERROR"
;; stdout: 4 41
;; stdout: "XML_PARSE_ERROR"
;; stdout: "XML_PARSE_ERROR"
;; stdout: false
(define (where file) (try (import file) (catch e e)))
(define e (where "templates/malformed.xml"))
(prn e.type)
(prn e.location.line)
; a task no file defines is looked up when the task runs, so import order does not
; matter; `tasklisp check` reports it
(prn (where "templates/unknown_ref.xml"))
(define e (try (uses_missing) (catch e e)))
(prn e.type e.reason)
(define e (where "templates/bad_test.xml"))
(prn e.type)
(prn e.location.line e.location.column)
; a DOCTYPE is refused: no entity expansion, no external entities
(prn (get (where "templates/billion_laughs.xml") "type"))
(prn (get (where "templates/external_entity.xml") "type"))
(prn (contains? (task-names) "t"))

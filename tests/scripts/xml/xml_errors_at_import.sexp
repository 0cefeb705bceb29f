;; stdout: "XML_PARSE_ERROR"
;; stdout: 4
;; stdout: "VALIDATION_ERROR"
;; stdout: 4 23
;; stdout: "VALIDATION_ERROR"
;; stdout: 4 41
;; stdout: "XML_PARSE_ERROR"
;; stdout: "XML_PARSE_ERROR"
;; stdout: false
(define (where file) (try (import file) (catch e e)))
(define e (where "templates/malformed.xml"))
(prn e.type)
(prn e.location.line)
; an unknown task is found when the file is imported, not when the task is called
(define e (where "templates/unknown_ref.xml"))
(prn e.type)
(prn e.location.line e.location.column)
(define e (where "templates/bad_test.xml"))
(prn e.type)
(prn e.location.line e.location.column)
; a DOCTYPE is refused: no entity expansion, no external entities
(prn (get (where "templates/billion_laughs.xml") "type"))
(prn (get (where "templates/external_entity.xml") "type"))
(prn (contains? (task-names) "uses_missing"))

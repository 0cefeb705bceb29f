;; stdout: "before"
;; error: VALIDATION_ERROR unknown task `not_defined_anywhere`
; an import error stops the script where the import is, like any other error
(prn "before")
(import "templates/unknown_ref.xml")
(prn "after")

;; stdout: "before"
;; error: VALIDATION_ERROR expected a value
; an import error stops the script where the import is, like any other error
(prn "before")
(import "templates/bad_test.xml")
(prn "after")

;; error: VALIDATION_ERROR unknown task `not_defined_anywhere` unknown_ref.xml:4:23
(import "templates/unknown_ref.xml")

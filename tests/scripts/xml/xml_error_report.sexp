;; error: VALIDATION_ERROR expected a value bad_test.xml:4:41
(import "templates/bad_test.xml")

;; error: VALIDATION_ERROR task `greet` basic.xml other.xml
(import "templates/basic.xml")
(import "templates/other.xml")

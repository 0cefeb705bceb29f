;; error: XML_PARSE_ERROR malformed.xml:4:3
(import "templates/malformed.xml")

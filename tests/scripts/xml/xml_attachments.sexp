;; stdout: "What is in cat.png?"
;; stdout: ({"mime" "image/png" "sha256" "e15f48aafa33c33d5adcfbb5edc10422d5bffda68aa5424d214df91efa29b373" "size" 17 "path" "fixtures/cat.png"} {"mime" "application/pdf" "url" "https://x.io/scan"})
; <attachments> in XML: each <attachment path> (a template) and its optional mime
(define seen nil)
(set-provider! (fn (request) (set! seen request) "ok"))
(import "templates/attachments.xml")
(look "cat.png")
(prn seen.prompt)
(prn seen.attachments)

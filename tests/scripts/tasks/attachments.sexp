;; stdout: {"type" "attachment" "path" "fixtures/cat.png" "mime" "image/png"}
;; stdout: {"type" "attachment" "url" "https://x.io/scan" "mime" "application/pdf"}
;; stdout: ({"mime" "image/png" "sha256" "e15f48aafa33c33d5adcfbb5edc10422d5bffda68aa5424d214df91efa29b373" "size" 17 "path" "fixtures/cat.png"} {"mime" "application/pdf" "url" "https://x.io/scan"})
;; stdout: ("image/png" "application/pdf")
;; stdout: "input_validation_failure"
;; stdout: "input_validation_failure"
; An attachment is a map marked "type" "attachment"; the file is read when a call sends it.
(prn (attachment "fixtures/cat.png"))
(define scan (attachment "https://x.io/scan" :mime "application/pdf"))
(prn scan)
; A procedure provider sees each attachment's type, digest, size and path or URL.
(define seen nil)
(set-provider! (fn (req) (set! seen req) "ok"))
(deftask look (picture) :prompt "Look." :attachments [picture scan])
(look "fixtures/cat.png")
(prn seen.attachments)
(prn (map (fn (a) a.mime) (get (last seen.messages) "attachments")))
; A name whose type cannot be told, and a missing file, fail before the provider is asked.
(prn (try (attachment "notes.txt") (catch e e.reason)))
(prn (try (look "fixtures/gone.png") (catch e e.reason)))

;; stdout: "short: doc"
;; stdout: "long: doc"
;; stdout: ("brief" "styled")
(set-provider! (fn (req) req.prompt))
(deftask summarize (text (style "short")) :prompt "{{style}}: {{text}}")
(define imported (import "templates/uses_library.xml"))
; a <task ref> passes the inputs its template declares; the others keep their defaults
(prn (get (brief "doc") "content"))
(prn (get (styled "doc" "long") "content"))
(prn imported)

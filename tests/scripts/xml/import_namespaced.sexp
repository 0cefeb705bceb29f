;; stdout: ("rv/check" "rv/flow" "rv/greet")
;; stdout: "Hello, Ada"
;; stdout: "Hello, urgent"
;; stdout: ("greet")
;; stdout: "Hello, Bo"
(set-provider! (fn (req) req.prompt))
(prn (sort (import "templates/basic.xml" :as rv) <))
(prn (get (rv/greet "Ada") "content"))
; references inside the file resolve to the file's own (namespaced) tasks
(prn (get (rv/flow "x") "content"))
; :only selects; the same file under another namespace is a separate import
(prn (import "templates/basic.xml" :only (greet)))
(prn (get (greet :who "Bo") "content"))

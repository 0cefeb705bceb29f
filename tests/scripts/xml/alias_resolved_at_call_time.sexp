;; stdout: ("draft" "outline" "scribble")
;; stdout: "Draft about tides in a calm tone"
;; stdout: "Draft about tides in a stormy tone"
;; stdout: "Draft about reefs in a calm tone"
;; stdout: "draft"
;; stdout: "task `scribble` is already registered (as a task or an alias)"
(set-provider! "echo") ; the prompt comes back as the answer
; an alias of a task that a later import defines is followed when it is called
(import "templates/late/alias.xml")
(import "templates/late/draft.xml")
(prn (task-names))
(prn (get (scribble "tides") "content"))
(prn (get (scribble "tides" :tone "stormy") "content"))
(prn (get (outline "reefs") "content"))
(prn (get (get-task "scribble") "name"))
(prn (try (task-alias "scribble" "x") (catch e (get e "message"))))

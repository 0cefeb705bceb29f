;; stdout: ("check" "flow" "greet")
;; stdout: "Hello, Ada"
;; stdout: "evaluator"
;; stdout: "Returns a verdict as JSON"
;; stdout: ("text")
;; stdout: "sequential"
;; stdout: ()
;; stdout: "Hello, calm"
(set-provider! (fn (req) req.prompt))
(prn (sort (import "templates/basic.xml") <))
(prn (get (greet "Ada") "content"))
(prn (get (get-task "check") "subtype"))
(prn check.description)
(prn flow.params)
(prn flow.type)
; importing the same file again does nothing
(prn (import "templates/basic.xml"))
(set-provider! (fn (req) (if (= req.task "check") "{\"urgent\": false}" req.prompt)))
(prn (get (flow "all fine") "content"))

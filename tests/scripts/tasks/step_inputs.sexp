;; stdout: "sum: route b to a"
;; stdout: "sum: {\"label\":\"bug\"}"
;; stdout: "input_validation_failure"
;; stdout: "the :input builder failed: nope"
;; stdout: "input_validation_failure"
;; stdout: ":inputs-from 5: no such earlier step (there are 1)"
;; stdout: ":inputs-from \"nobody\": no such earlier step (there are 1)"
;; stdout: ("VALIDATION_ERROR" "the :input builder must return a map of arguments, not 3" 3)
;; stdout: "sum: static"
(set-provider! (fn (req) (if (string-contains? req.prompt "classify") "{\"label\": \"bug\"}" req.prompt)))
(deftask classify (x) :prompt "classify {{x}}" :output "json")
(deftask route (label issue) :prompt "route {{issue}} to {{label}}")
(deftask summarize (text) :prompt "sum: {{text}}")
(prn (get (sequential
            (classify "x")
            (route "a" "b")
            (step summarize :inputs-from [0 "route"] :input (fn (prev) {"text" prev[1].content}))) "content"))
; a builder sees the chosen results in order, structured
(prn (get (sequential
            (classify "x")
            (step summarize :inputs-from ["classify"] :input (fn (prev) {"text" prev[0].parsedContent}))) "content"))
(define (failure-of builder from)
  (try (sequential (classify "x") (step summarize :inputs-from from :input builder))
       (catch e e.details.subtaskError)))
(define broken (failure-of (fn (prev) (error "nope")) [0]))
(prn broken.reason)
(prn broken.message)
(prn (get (failure-of (fn (prev) {"text" "t"}) [5]) "reason"))
(prn (get (failure-of (fn (prev) {"text" "t"}) [5]) "message"))
(prn (get (failure-of (fn (prev) {"text" "t"}) ["nobody"]) "message"))
; a builder's value that is not a map is the program's shape, not a failed step
(prn (try (sequential (classify "x") (step summarize :inputs-from [0] :input (fn (prev) 3)))
          (catch e [e.type e.message e.invalidModel])))
; without :inputs-from the builder gets an empty list
(prn (get (sequential (step summarize :input (fn (prev) {"text" (if (empty? prev) "static" "?")}))) "content"))

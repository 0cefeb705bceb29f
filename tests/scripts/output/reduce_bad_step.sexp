;; stdout: "output_format_failure"
;; stdout: 1
;; stdout: true
;; stdout: 6
; A reduction step whose JSON answer does not parse fails the reduction (never resets it).
(set-provider! (fn (req) (if (= req.params.item 2) "oops" (str (+ req.params.acc req.params.item)))))
(deftask add (acc item) :prompt "{{acc}} + {{item}}" :output "json")
(define e (try (reduce-task add 0 [1 2 3]) (catch e e)))
(prn e.reason)
(prn e.details.index)
(prn (string-starts-with? e.message "item 1: "))
(set-provider! (fn (req) (str (+ req.params.acc req.params.item))))
(prn (get (reduce-task add 0 [1 2 3]) "parsedContent"))

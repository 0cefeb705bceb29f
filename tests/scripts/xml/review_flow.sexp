;; stdout: "PAGE: disk full"
;; stdout: "route odd to nowhere"
;; stdout: "Summarize in a brief style: typo"
;; stdout: nil
;; stdout: "word=hi there"
;; stdout: ">abc"
;; stdout: "atomic" "standard" "sequential" "reduce" "script"
(define verdict "{\"label\": \"bug\", \"urgent\": true, \"score\": 5}")
(set-provider! (fn (req) (if (= req.task "classify") verdict req.prompt)))
(import "templates/review.xml")
; urgent and score >= 3: the first case pages
(prn (get (triage "disk full") "content"))
; an S-expression test
(set! verdict "{\"label\": \"bug\", \"urgent\": false, \"score\": -1}")
(prn (get (triage "odd") "content"))
; `!` and `||`; summarize's default style applies
(set! verdict "{\"label\": \"typo\", \"urgent\": false, \"score\": 1}")
(prn (get (triage "typo") "content"))
; no case matches: the cond step yields nil
(set! verdict "{\"label\": \"bug\", \"urgent\": true, \"score\": 1}")
(prn (get (triage "meh") "parsedContent"))
; a script task renders {{word}} in its command
(prn (get (echo_word "hi there") "content"))
; a reduce task folds the items through join2
(prn (get (join_all ["a" "b" "c"]) "content"))
(prn summarize.type summarize.subtype triage.type join_all.type echo_word.type)

;; stdout: "urgent"
;; stdout: "high"
;; stdout: "low"
;; stdout: "from text"
;; stdout: 3
;; stdout: "output_format_failure"
;; error: TASK_FAILURE output_format_failure cond-output needs JSON output
(define answer "{\"urgent\": true, \"score\": 5}")
(set-provider! (fn (req) answer))
(deftask classify (x) :prompt "{{x}}" :output "json")
(define (decide r)
  (cond-output r
    (output.urgent "urgent")
    ((> output.score 3) "high")
    (else "low")))
(prn (decide (classify "server down")))
(set! answer "{\"urgent\": false, \"score\": 4}")
(prn (decide (classify "slow")))
(set! answer "{\"urgent\": false, \"score\": 1}")
(prn (decide (classify "typo")))
; content without :output "json" is parsed; a plain string is parsed too
(deftask plain (x) :prompt "{{x}}")
(set! answer "{\"kind\": \"text\"}")
(prn (cond-output (plain "x") ((= output.kind "text") "from text") (else "other")))
(prn (cond-output "[1, 2, 3]" ((list? output) (length output))))
(set! answer "plain words")
(prn (try (cond-output (plain "x") (else 1)) (catch e e.reason)))
(cond-output (plain "x") (output.urgent 1) (else 2))

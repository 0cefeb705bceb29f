;; stdout: {"turns" {"used" 0 "limit" 10000 "lastTurnAt" nil} "context" {"used" 0 "limit" 128000 "peakUsage" 0}}
;; stdout: 2 10000 {"used" 5 "limit" 128000 "peakUsage" 30}
;; stdout: true
;; stdout: {"input_tokens" 2 "output_tokens" 3}
;; stdout: "turns"
;; stdout: "the provider session allows 2 turns"
;; stdout: "context"
;; stdout: {"resource" "context" "used" 13 "limit" 10 "trace" ({"task" "t" "step" nil "file" "resource_metrics.sexp" "line" 14})}
;; stdout: "task `twice` allows 1 turn (:max-turns)"
;; stdout: 0
(prn (resource-metrics))
(define usage 30)
(set-provider! (fn (req) {"content" "ok" "usage" {"input_tokens" (- usage 3) "output_tokens" 3}}))
(deftask t (x) :prompt "{{x}}")
(t "a")
(set! usage 5)
(define r (t "b"))
(define m (resource-metrics))
(prn m.turns.used m.turns.limit m.context)
; the time of the last turn, ISO 8601
(prn (string? (re-matches "\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{3}Z" m.turns.lastTurnAt)))
(prn r.notes.usage)
; limits of the session
(set-provider! (fn (req) "ok") :max-turns 2 :max-context 10)
(t "a")
(t "b")
(define e (try (t "c") (catch e e)))
(prn e.resource)
(prn e.message)
(set-provider! (fn (req) "ok") :max-context 10)
(define big (try (t "a prompt of fifty characters, more or less; longer") (catch e e)))
(prn big.resource)
(prn big.details)
; :max-turns limits the turns of one call of a task
(deftask twice (x) :max-turns 1 (begin (t x) (t x)))
(prn (try (twice "x") (catch e e.message)))
; with-provider runs a session of its own
(prn (with-provider "echo" (get-in (resource-metrics) ["turns" "used"])))

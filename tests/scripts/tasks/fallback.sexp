;; stdout: "answered hi"
;; stdout: "procedure"
;; stdout: ({"provider" "procedure" "error" "the server is down"})
;; stdout: "input_validation_failure"
;; stdout: "the server is down"
;; stdout: "procedure"
;; stdout: "with-fallback: expected a non-empty list of providers"
; with-fallback: a provider that fails transiently hands the request to the next.
(define (down request) (fail "llm_error" "the server is down"))
(define (refuses request) (fail "input_validation_failure" "the request is wrong"))
(define (up request) (str "answered " request.prompt))
(deftask ask (q) :prompt "{{q}}")
(with-fallback [down up]
  (define r (ask "hi"))
  (prn r.content)
  (prn r.notes.provider)
  (prn r.notes.fallbacks))
; a failure that is the request's fault is not tried elsewhere
(prn (with-fallback [refuses up] (try (ask "hi") (catch e e.reason))))
; when every provider fails, the last failure is raised
(prn (with-fallback [down down] (try (ask "hi") (catch e e.message))))
; conversations fall back too
(prn (with-fallback [down up] (get-in (chat (conversation) "yo") ["notes" "provider"])))
(prn (try (with-fallback [] (ask "x")) (catch e e.message)))

;; stdout: {"input_tokens" 2000 "output_tokens" 10 "cached_input_tokens" 1920}
;; stdout: 0.0027
;; stdout: {"input_tokens" 1120 "output_tokens" 10 "cached_input_tokens" 1000 "cache_write_tokens" 100}
;; stdout: 0.000885
;; stdout: 0.0051
; Cached input tokens a provider reports are priced at the model's cached-input price,
; written ones at its cache-write price (here a procedure provider reports them).
(define usage nil)
(set-provider! (fn (request) {"content" "ok" "usage" usage}))
(deftask ask () :prompt "Hi" :model "gpt-4o")
(set! usage {"input_tokens" 2000 "output_tokens" 10 "cached_input_tokens" 1920})
(define r (ask))
(prn r.notes.usage)
; 80 input tokens at $2.50, 1920 cached at $1.25, 10 output at $10 per million
(prn r.notes.cost)
(deftask ask-claude () :prompt "Hi" :model "claude-sonnet-4-5")
(set! usage {"input_tokens" 1120 "output_tokens" 10 "cached_input_tokens" 1000 "cache_write_tokens" 100})
(define c (ask-claude))
(prn c.notes.usage)
; 20 input at $3, 1000 read at $0.30, 100 written at $3.75, 10 output at $15 per million
(prn c.notes.cost)
; with nothing cached, the same tokens at the input price
(set! usage {"input_tokens" 2000 "output_tokens" 10})
(prn (get-in (ask) ["notes" "cost"]))

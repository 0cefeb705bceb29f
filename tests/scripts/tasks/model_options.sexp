;; stdout: {"temperature" 0 "max_tokens" 100 "seed" 7}
;; stdout: "Base.\n\nBe brief."
;; stdout: ({"role" "system" "content" "Base.\n\nBe brief."} {"role" "user" "content" "Q: why?"})
;; stdout: {"temperature" 0.5 "max_tokens" 100}
;; stdout: "Base."
;; stdout: {"max_tokens" 5 "top_p" 0.9}
;; stdout: {"max_tokens" 9 "top_p" 0.9}
;; stdout: {"temperature" 0 "max_tokens" 5 "top_p" 0.9 "seed" 7}
;; stdout: "with-provider: model option `temperature` must be a number from 0 to 2 (got 9)"
;; stdout: "model option `top_p` must be a number from 0 to 1 (got 2)"
;; stdout: "set-provider!: model option `stop` must be a string or a list of strings (got 3)"
;; stdout: {"temperature" 0 "seed" 7}
(define seen nil)
(define (spy req) (set! seen req) "ok")
(set-provider! spy :temperature 0.5 :max-tokens 100 :system "Base.")
(deftask ask (q) :system "Be brief." :prompt "Q: {{q}}" :temperature 0 :seed 7)
(deftask plain (q) :prompt "{{q}}")
(ask "why?")
(prn seen.options)
(prn seen.system)
(prn seen.messages)
(plain "x")
(prn seen.options)
(prn seen.system)
(with-provider spy :max_tokens 5 :top-p 0.9
  (plain "y")
  (prn seen.options)
  (with-provider spy :max-tokens 9 (plain "z") (prn seen.options))
  (ask "w")
  (prn seen.options))
(prn (try (with-provider spy :temperature 9 (plain "q")) (catch e e.message)))
(prn (try (deftask bad () :prompt "x" :top-p 2) (catch e e.message)))
(prn (try (set-provider! spy :stop 3) (catch e e.message)))
(prn ask.options)

;; stdout: "ask"
;; stdout: "Be brief."
;; stdout: "Question: why?"
;; stdout: "m-1"
;; stdout: {"q" "why?" "n" 2}
;; stdout: 1
;; stdout: ()
;; stdout: ({"role" "system" "content" "Be brief."} {"role" "user" "content" "Question: why?"})
;; stdout: "llm_error"
(define seen nil)
(set-provider! (fn (req) (set! seen req) "ok"))
(deftask ask (q (n 2)) :system "Be brief." :prompt "Question: {{q}}" :model "m-1")
(ask "why?")
(prn seen.task)
(prn seen.system)
(prn seen.prompt)
(prn seen.model)
(prn seen.params)
(prn seen.round)
(prn seen.issues)
(prn seen.messages)
; a provider must answer with a string or {"content" …}
(set-provider! (fn (req) 42))
(prn (try (ask "x") (catch e e.reason)))

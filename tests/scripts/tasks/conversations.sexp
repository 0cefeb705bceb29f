;; stdout: ({"role" "system" "content" "You are terse."})
;; stdout: "reply 2"
;; stdout: ({"role" "system" "content" "You are terse."} {"role" "user" "content" "Hi"})
;; stdout: "m-1" {"temperature" 0} "chat" "Hi" "You are terse."
;; stdout: ({"role" "system" "content" "You are terse."} {"role" "user" "content" "Hi"} {"role" "assistant" "content" "reply 2"} {"role" "user" "content" "Again"} {"role" "assistant" "content" "reply 4"})
;; stdout: 1 3
;; stdout: 2 {"task" "chat" "usage" {"input_tokens" 10 "output_tokens" 2} "contextWarning" false}
;; stdout: 5
;; stdout: ("RESOURCE_EXHAUSTION" {"resource" "turns" "used" 2 "limit" 1})
;; stdout: ("RESOURCE_EXHAUSTION" {"resource" "context" "used" 9 "limit" 3})
;; stdout: true
;; stdout: false
;; stdout: "chat: expected a conversation, got a string \"not one\""
;; stdout: "conversation: unknown option :colour"
(define seen nil)
(set-provider! (fn (req) (set! seen req)
                 {"content" (str "reply " (length req.messages)) "usage" {"input_tokens" 10 "output_tokens" 2}}))
(define c0 (conversation :system "You are terse." :model "m-1" :temperature 0))
(prn (messages c0))
(define r1 (chat c0 "Hi"))
(prn r1.content)
(prn seen.messages)
(prn seen.model seen.options seen.task seen.prompt seen.system)
(define c1 r1.conversation)
(define r2 (chat c1 "Again"))
(prn (messages r2))
(prn (length (messages c0)) (length (messages c1)))
(prn r2.conversation.turns r2.notes)
; branching from c1 again gives an independent conversation
(prn (length (messages (chat c1 "Other"))))
; limits
(define small (conversation :max-turns 1))
(define s1 (chat small "one"))
(prn (try (chat s1.conversation "two") (catch e [e.type e.details])))
(define tiny (conversation :max-context 3))
(prn (try (chat tiny "a longer message than three tokens") (catch e [e.type e.details])))
(define warn (conversation :max-context 13 :warning-threshold 0.5))
(prn (get-in (chat warn "hi") ["notes" "contextWarning"]))
(prn (get-in (chat (conversation :max-context 100) "hi") ["notes" "contextWarning"]))
(prn (try (chat "not one" "x") (catch e e.message)))
(prn (try (conversation :colour 1) (catch e e.message)))

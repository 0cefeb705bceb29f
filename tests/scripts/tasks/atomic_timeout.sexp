;; stdout: "execution_timeout"
;; stdout: 0.3
;; stdout: "ok"
(set-provider! :command {"command" "sleep 5; echo late"})
(deftask slow () :prompt "x" :timeout 0.3)
(prn (try (slow) (catch e e.reason)))
(prn slow.metadata.timeout)
(set-provider! (fn (req) "ok"))
(prn (get (slow) "content"))

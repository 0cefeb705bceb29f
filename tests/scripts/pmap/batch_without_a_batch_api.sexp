;; stdout: ("a!" "b!" "c!")
;; stdout: ("a!?!" "b!?!")
;; A provider without a batch API (here a procedure) answers each call of a batch pmap
;; directly, so a batch script runs offline unchanged; dependent calls work too.
(set-provider! (fn (req) (str req.prompt "!")))
(deftask shout (x) :prompt "{{x}}")
(prn (pmap (fn (x) (get (shout x) "content")) ["a" "b" "c"] :batch true))
(deftask ask (x) :prompt "{{x}}?")
(prn (pmap (fn (x) (get (ask (get (shout x) "content")) "content")) ["a" "b"] :batch true))

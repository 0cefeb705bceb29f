; 64 script tasks that each sleep 0.2 s, 16 at a time: about 4 × 0.2 s of wall time.
(deftask nap (n) :command ["sleep" "0.2"])
(define timing (time (fn () (pmap nap (range 64) :concurrency 16))))
(println "64 × sleep 0.2 at concurrency 16:" (round timing.ms) "ms")

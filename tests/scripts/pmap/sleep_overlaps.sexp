;; stdout: (0 1 2 3 4 5 6 7)
;; stdout: true
;; Eight items that each sleep 0.3 s run at once: well under the 2.4 s they take in turn.
(define start (time (fn () (pmap (fn (x) (sleep 0.3) x) (range 8) :concurrency 8))))
(prn start.value)
(prn (< start.ms 1500))

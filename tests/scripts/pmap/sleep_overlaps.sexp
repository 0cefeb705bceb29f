;; stdout: (0 1 2 3 4 5 6 7)
;; stdout: (start start start start start start start start)
;; Eight items that each sleep 0.3 s run at once: every item starts before any ends
;; (shown by the order of events, not by the clock).
(define events '())
(define (note! e) (set! events (cons e events)))
(prn (pmap (fn (x) (note! 'start) (sleep 0.3) (note! 'end) x) (range 8) :concurrency 8))
(prn (take (reverse events) 8))

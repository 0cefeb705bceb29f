;; stdout: "execution_timeout"
;; stdout: "the task ran longer than its :timeout of 0.300s"
;; stdout: 0.3
;; stdout: "done"
;; stdout: "execution_timeout"
;; stdout: "inner still ran"
;; A body task's :timeout bounds its body: a sleep, a loop, an inner task; once the task
;; has returned, the program goes on without the deadline.
(deftask slow () :timeout 0.3 (sleep 1e9))
(define e (try (slow) (catch e e)))
(prn e.reason)
(prn e.message)
(prn slow.metadata.timeout)
(deftask spin () :timeout 0.3 (let loop ((i 0)) (loop (+ i 1))))
(try (spin) (catch e nil))
(sleep 0.5)
(prn "done")
(deftask inner () :timeout 100 (sleep 1e9))
(deftask outer () :timeout 0.3 (inner))
(prn (try (outer) (catch e e.reason)))
(deftask quick () :timeout 0.3 "inner still ran")
(deftask wrapper () :timeout 100 (begin (sleep 0.5) (quick)))
(prn (get (wrapper) "content"))

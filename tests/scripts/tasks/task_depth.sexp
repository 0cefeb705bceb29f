;; stdout: "done"
;; stdout: "RESOURCE_EXHAUSTION"
;; stdout: "task_depth"
;; stdout: 100
;; stdout: "still running"
;; error: RESOURCE_EXHAUSTION nested deeper than 100
(deftask countdown (n) (if (= n 0) "done" (countdown (- n 1))))
(prn (get (countdown 99) "content"))
(define e (try (countdown 100) (catch e e)))
(prn e.type)
(prn e.resource)
(prn e.details.limit)
(prn "still running")
(countdown 1000)

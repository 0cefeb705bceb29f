;; stdout: set
;; stdout: "inner is used before its definition"
(define (f flag)
  (when flag (define inner 'set))
  inner)
(prn (f true))
(prn (try (f false) (catch e e.message)))

;; stdout: 3 3
(define e (try
  (error "where")
  (catch err err)))
(prn e.location.line e.location.column)

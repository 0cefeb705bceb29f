;; stdout: 11
;; stdout: "unbound symbol: y"
(define (outer x)
  (define y (* x 2))
  (define (helper z) (+ y z))
  (helper 1))
(prn (outer 5))
(prn (try y (catch e e.message)))

;; stdout: 499500 true true
(define t (time (fn () (reduce + 0 (range 1000)))))
(prn t.value (float? t.ms) (>= t.ms 0))

;; stdout: true
(define xs [0.1 (/ 1.0 3) 1e21 1e-7 (sqrt 2)])
(prn (equal? xs (map (fn (x) (read (repr x))) xs)))

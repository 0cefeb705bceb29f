;; stdout: 1000
;; stdout: 1000
(prn (length (sort (range 1000) (fn (a b) true))))
(prn (length (sort (range 1000) (fn (a b) (= 0 (modulo (+ a b) 3))))))

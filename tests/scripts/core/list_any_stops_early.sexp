;; stdout: true
(prn (any? (fn (x) (if (= x 2) true (if (= x 3) (error "too far") false))) '(1 2 3)))

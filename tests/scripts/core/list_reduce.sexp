;; stdout: 10
;; stdout: (3 2 1)
;; stdout: 42
;; stdout: 7
(prn (reduce + 0 '(1 2 3 4)))
(prn (reduce (fn (acc x) (cons x acc)) '() '(1 2 3)))
(prn (reduce + 42 '()))
(prn (reduce - 10 '(1 2)))

;; stdout: 3 0 0 5 1
(prn (length '(1 2 3)) (length '()) (length nil) (length "héllo") (length {"a" 1}))

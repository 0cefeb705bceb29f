;; stdout: {"c" 1 "a" 2 "b" 3} ("c" "a" "b")
;; stdout: true false true
(define m (assoc (assoc (assoc {} "c" 1) "a" 2) "b" 3))
(prn m (keys m))
(prn (equal? {"a" 1 "b" 2} {"b" 2 "a" 1}) (equal? {"a" 1} {"a" 1.0}) (= {"a" 1} {"a" 1}))

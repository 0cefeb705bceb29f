;; stdout: true false true true true true
;; stdout: false true
(prn (= 1 1.0) (= 1 2) (= 1 1 1) (= 'a 'a) (= "x" "x") (= [1 2] [1 2]))
(prn (equal? 1 1.0) (equal? 1 1))

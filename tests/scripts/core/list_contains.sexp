;; stdout: true false false
;; stdout: true true false
;; stdout: true true false
(prn (contains? '(1 (2) "a") '(2)) (contains? '(1 2) 3) (contains? '(1) 1.0))
(prn (contains? {"a" 1} "a") (contains? {"a" 1} :a) (contains? {"a" 1} "b"))
(prn (contains? "hello" "ell") (contains? "hello" "") (contains? "hello" "xyz"))

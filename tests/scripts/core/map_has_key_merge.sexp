;; stdout: true false true
;; stdout: {"a" 1 "b" 3 "c" 4}
;; stdout: {}
(prn (has-key? {"a" nil} "a") (has-key? {"a" 1} "b") (has-key? {"a" 1} :a))
(prn (merge {"a" 1 "b" 2} {"b" 3 "c" 4} nil {}))
(prn (merge))

;; stdout: "abc" xyz true
;; stdout: true
(prn (symbol->string 'abc) (string->symbol "xyz") (symbol? (string->symbol "a b")))
(prn (eq? (string->symbol "q") 'q))

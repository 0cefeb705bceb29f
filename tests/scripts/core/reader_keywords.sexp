;; stdout: :name
;; stdout: true
;; stdout: "x"
(prn :name)
(prn (keyword? :a-b))
(prn (symbol->string :x))

;; stdout: true false false
;; stdout: {"a" 1 "b" 2} {}
(prn (map? {}) (map? '()) (map? nil))
(prn (hash-map :a 1 "b" 2) (hash-map))

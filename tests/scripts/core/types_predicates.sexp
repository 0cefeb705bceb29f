;; stdout: true false true false
;; stdout: true false true false
;; stdout: true true false true
;; stdout: true true true true
;; stdout: false false false
(prn (nil? nil) (nil? false) (boolean? false) (boolean? nil))
(prn (symbol? 'a) (symbol? :a) (keyword? :a) (keyword? "a"))
(prn (procedure? car) (procedure? (fn () 1)) (procedure? 'car) (procedure? inc))
(prn (string? "") (list? []) (map? {}) (number? 1))
(prn (task? car) (task? nil) (task? (fn () 1)))

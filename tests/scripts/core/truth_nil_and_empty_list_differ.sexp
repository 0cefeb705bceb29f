;; stdout: false
;; stdout: false true true
;; stdout: "[null,[]]"
(prn (equal? nil (list)))
(prn (nil? (list)) (null? (list)) (null? nil))
(prn (json-stringify [nil (list)]))

;; stdout: true true false false
;; stdout: true true false false
;; stdout: true true true true false false
(prn (list? '()) (list? '(1)) (list? nil) (list? "a"))
(prn (null? '()) (null? nil) (null? '(1)) (null? ""))
(prn (empty? '()) (empty? "") (empty? {}) (empty? nil) (empty? '(1)) (empty? "a"))

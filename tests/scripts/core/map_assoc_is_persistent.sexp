;; stdout: {"a" 1} {"a" 3 "b" 2}
;; stdout: {"k" 1}
(define m {"a" 1})
(define m2 (assoc m "b" 2 :a 3))
(prn m m2)
(prn (assoc nil "k" 1))

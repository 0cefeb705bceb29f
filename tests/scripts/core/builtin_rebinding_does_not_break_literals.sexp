;; stdout: (1 2) {"a" 1} (1 2)
;; stdout: mine
(define list (fn args 'mine))
(define hash-map (fn args 'mine))
(prn [1 2] {"a" 1} `(1 ,(+ 1 1)))
(prn (list 1))

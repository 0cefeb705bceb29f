;; stdout: 2 nil
;; stdout: (1 2 3 4)
(prn (index-of '(a b c) 'c) (index-of '(a b) 'z))
(prn (flatten '(1 (2 (3 ())) ((4)))))

;; stdout: 3 nil
;; stdout: (1 2) (1 2) ()
;; stdout: (3) () (1 2)
(prn (last '(1 2 3)) (last '()))
(prn (take '(1 2 3) 2) (take '(1 2) 5) (take '(1 2) 0))
(prn (drop '(1 2 3) 2) (drop '(1 2) 5) (drop '(1 2) 0))

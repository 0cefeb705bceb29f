;; stdout: (1 2 4)
(prn (list 1 #;(this is dropped) 2 #; 3 4))

;; stdout: 1 2 2 1 nil
(prn (if true 1 2) (if false 1 2) (if nil 1 2) (if 0 1 2) (if false 1))

;; stdout: true true false false false
(prn (not false) (not nil) (not 0) (not "") (not (list)))

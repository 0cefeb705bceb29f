;; stdout: m
;; stdout: 5
(prn (defmacro m (x) x))
(prn (m 5))

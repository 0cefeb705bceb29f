;; stdout: "1 and two"
;; stdout: "no holes"
;; stdout: "(1 \"a\")nil"
;; stdout: "{"
(prn (format "{} and {}" 1 "two"))
(prn (format "no holes"))
(prn (format "{}{}" [1 "a"] nil))
(prn (format "{"))

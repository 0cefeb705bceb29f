;; stdout: {"n" 2}
;; stdout: {"a" {"b" {"c" 1}}}
;; stdout: {"a" {"x" 0 "y" 2}}
(prn (update {"n" 1} "n" inc))
(prn (assoc-in {} ["a" "b" "c"] 1))
(prn (assoc-in {"a" {"x" 0}} ["a" "y"] 2))

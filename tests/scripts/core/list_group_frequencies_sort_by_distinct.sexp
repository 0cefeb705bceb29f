;; stdout: {"false" (1 3 5) "true" (2 4)}
;; stdout: {"1" ("a" "b") "2" ("cc")}
;; stdout: {"a" 3 "b" 1 "1" 2}
;; stdout: ("a" "bb" "ccc")
;; stdout: ("ccc" "bb" "a")
;; stdout: ({"n" 1 "k" "x"} {"n" 1 "k" "y"} {"n" 2 "k" "z"})
;; stdout: (1 2 3 1.0 "1")
;; stdout: {} {} () ()
(prn (group-by even? '(1 2 3 4 5)))
(prn (group-by string-length '("a" "cc" "b")))
(prn (frequencies '("a" "b" "a" 1 "a" 1)))
(prn (sort-by string-length '("ccc" "a" "bb")))
(prn (sort-by string-length '("a" "ccc" "bb") >))
(prn (sort-by (fn (m) m.n) '({"n" 2 "k" "z"} {"n" 1 "k" "x"} {"n" 1 "k" "y"})))
(prn (distinct '(1 2 1 3 2 1.0 "1" 1.0)))
(prn (group-by identity '()) (frequencies nil) (sort-by identity '()) (distinct '()))

;; stdout: (a 1 "s" (2) {"k" :v})
;; stdout: 42 x nil 1
;; stdout: 42
(prn (read "(a 1 \"s\" [2] {\"k\" :v})"))
(prn (read "42") (read "  x  ") (read "") (read "1 2"))
(prn (eval (read "(* 6 7)")))

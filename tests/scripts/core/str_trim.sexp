;; stdout: "a b" "x" "" ""
(prn (string-trim "  a b  ") (string-trim "\t\n x \r\n") (string-trim "") (string-trim "   "))

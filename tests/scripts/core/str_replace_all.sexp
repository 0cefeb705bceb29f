;; stdout: "a+b+c"
;; stdout: "bbbbbb"
;; stdout: "hello"
;; stdout: "abc"
(prn (string-replace "a-b-c" "-" "+"))
(prn (string-replace "aaa" "a" "bb"))
(prn (string-replace "héllo" "é" "e"))
(prn (string-replace "abc" "x" "y"))

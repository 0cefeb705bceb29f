;; stdout: "a, b, c"
;; stdout: "1-:k-s"
;; stdout: ""
;; stdout: "xy"
(prn (string-join '("a" "b" "c") ", "))
(prn (string-join '(1 :k "s") "-"))
(prn (string-join '() ","))
(prn (string-join '("x" "y")))

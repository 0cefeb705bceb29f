;; stdout: true true true true
(prn (< "apple" "banana") (> "b" "a") (<= "a" "a") (< "B" "a"))

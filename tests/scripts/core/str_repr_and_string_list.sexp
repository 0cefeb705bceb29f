;; stdout: "\"a\\nb\"" "1.0" "(1 \"x\")"
;; stdout: ("h" "é" "🎉")
(prn (repr "a\nb") (repr 1.0) (repr '(1 "x")))
(prn (string->list "hé🎉"))

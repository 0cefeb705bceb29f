;; stdout: "12"
;; stdout: ("me@host" "me" "host")
;; stdout: nil nil
;; stdout: ("1" "2" "3")
;; stdout: (("a=1" "a" "1") ("b=2" "b" "2"))
;; stdout: "me at host"
;; stdout: "x-y-z"
;; stdout: ("ab" "ab" nil)
;; stdout: "EVAL_ERROR" true
(prn (re-find "\\d+" "ab12c3"))
(prn (re-matches "(\\w+)@(\\w+)" "me@host"))
(prn (re-matches "\\d+" "12a") (re-find "z" "abc"))
(prn (re-seq "\\d" "1a2b3"))
(prn (re-seq "(\\w)=(\\d)" "a=1, b=2"))
(prn (re-replace "(\\w+)@" "me@host" "$1 at "))
(prn (re-replace "\\s+" "x  y\tz" "-"))
(prn (re-find "(ab)|(cd)" "xxab"))
(prn (try (re-find "(" "x") (catch e e.type)) (string-contains? (try (re-matches "a)|(b" "a") (catch e e.message)) "invalid regular expression"))

;; stdout: 42 -7 1.5 1000.0
;; stdout: nil nil 12 nil
;; stdout: "42" "2.5" "1e21"
(prn (string->number "42") (string->number "-7") (string->number "1.5") (string->number "1e3"))
(prn (string->number "abc") (string->number "") (string->number " 12 ") (string->number "1-2"))
(prn (number->string 42) (number->string 2.5) (number->string 1e21))

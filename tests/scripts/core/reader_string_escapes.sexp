;; stdout: "a\n\"b\"\\ \t \r é"
;; stdout: 12
;; stdout: tab[	] e[é] snow[☃]
(define s "a\n\"b\"\\ \t \r \u{e9}")
(prn s)
(prn (string-length s))
(println "tab[\t] e[\u{e9}] snow[\u{2603}]")

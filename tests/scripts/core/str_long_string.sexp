;; stdout: 200000 "ab" 200000
(define s (string-join (map (fn (i) "ab") (range 100000)) ""))
(prn (string-length s) (substring s 199998) (string-length (string-upcase s)))

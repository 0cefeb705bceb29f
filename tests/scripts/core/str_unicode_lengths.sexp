;; stdout: 5 1 0 3
;; stdout: 3
(prn (string-length "héllo") (string-length "🎉") (string-length "") (string-length "日本語"))
(prn (length (string->list "a🎉b")))

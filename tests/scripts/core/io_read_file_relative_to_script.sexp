;; stdout: 6
;; stdout: "hello\n"
(prn (string-length (read-file "fixtures/hello.txt")))
(prn (read-file "fixtures/hello.txt"))

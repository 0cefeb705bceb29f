;; stdout: "line one\nline two é"
;; stdout: "(1 \"x\")"
(define path (str "/tmp/tasklisp-core-io-" (getenv "HOME") ".txt"))
(define path (string-replace path "/" "_"))
(define path (str "/tmp/" path))
(write-file path "line one\nline two é")
(prn (read-file path))
(write-file path [1 "x"])
(prn (read-file path))

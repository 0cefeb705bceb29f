;; stdout: out
;; stdout: false
;; stdout: "one\n(two 2)\n"
;; stdout: true
;; stdout: ("a.txt" "b.txt")
;; stdout: true false
;; stdout: true
(println "out")
(eprint "to" "stderr")
(eprintln "!")
(define path (str "/tmp/tasklisp-append-" (time-ms) "-" (length (str (now))) ".txt"))
(prn (file-exists? path))
(append-file path "one\n")
(append-file path (list 'two 2))
(append-file path "\n")
(prn (read-file path))
(prn (file-exists? path))
(prn (list-dir "fixtures/listing"))
(prn (file-exists? "fixtures/listing") (file-exists? "fixtures/none"))
(prn (string-contains? (try (list-dir "fixtures/none") (catch e e.message)) "list-dir: cannot read"))

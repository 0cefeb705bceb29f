;; stdout: name? hello Ada
;; stdin: Ada
(display "name? ")
(define name (read-line))
(println (str "hello " name))

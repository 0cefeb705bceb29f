;; stdout: a 1 b
;; stdout: "a" 1 :k
;; stdout: xy z
;; stdout: "s" sym
(display "a" 1 "b")
(newline)
(write "a" 1 :k)
(newline)
(print "x")
(println "y" "z")
(prn "s" 'sym)

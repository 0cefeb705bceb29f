;; stdout: x
;; stdout: nil nil
(define r (print ""))
(prn r (println "x"))

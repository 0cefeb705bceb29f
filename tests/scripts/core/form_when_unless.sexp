;; stdout: 2 nil 2 nil
;; stdout: side effect
(prn (when true 1 2) (when false 1) (unless false 1 2) (unless true 1))
(when (> 2 1) (println "side effect"))

;; stdout: ("RESOURCE_EXHAUSTION" "macro expansion does not terminate")
;; stdout: still running
(defmacro forever (x) `(forever ,x))
(prn (try (eval '(forever 1)) (catch e (list e.type e.message))))
(println "still running")

;; stdout: "deep" nil :d {"a" (1 {"b" "deep"})}
(define m {"a" [1 {"b" "deep"}]})
(prn (get-in m ["a" 1 "b"]) (get-in m ["a" 5 "b"]) (get-in m ["x" "y"] :d) (get-in m []))

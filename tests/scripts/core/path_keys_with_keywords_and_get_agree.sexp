;; stdout: true
;; stdout: true
(define m {:name "x" "list" [1 2]})
(prn (= m.name (get m "name") (get m :name) (path m "name")))
(prn (= m.list[1] (get-in m ["list" 1]) (path m "list[1]")))

;; stdout: 20
;; stdout: -20
;; stdout: ("a" "b")
;; stdout: 25
(prn (-> 5 (- 3) (* 10)))
(prn (->> 5 (- 3) (* 10)))
(prn (-> {"a" 1} (assoc "b" 2) keys))
(prn (->> (range 10) (filter even?) (map inc) (reduce + 0)))

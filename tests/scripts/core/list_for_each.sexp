;; stdout: item 1
;; stdout: item 2
;; stdout: nil
;; stdout: 1 x
;; stdout: 2 y
(prn (for-each (fn (x) (println "item" x)) '(1 2)))
(for-each (fn (a b) (println a b)) '(1 2 3) '(x y))

;; stdout: true false false
;; stdout: true false true
(prn (any? odd? '(2 4 5)) (any? odd? '(2 4)) (any? odd? '()))
(prn (every? odd? '(1 3)) (every? odd? '(1 2)) (every? odd? '()))

;; stdout: 6
;; stdout: 10
;; stdout: ()
;; stdout: (1 (2 3))
;; stdout: 9
(prn (apply + '(1 2 3)))
(prn (apply + 1 2 '(3 4)))
(prn (apply list '()))
(prn (apply (fn (a . r) (list a r)) 1 '(2 3)))
(prn (apply max '(4 9 2)))

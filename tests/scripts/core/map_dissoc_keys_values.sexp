;; stdout: {"z" 1 "m" 3} {"z" 1 "a" 2 "m" 3}
;; stdout: ("z" "a" "m") (1 2 3) () ()
(define m {"z" 1 "a" 2 "m" 3})
(prn (dissoc m "a" "nope") m)
(prn (keys m) (values m) (keys {}) (values {}))

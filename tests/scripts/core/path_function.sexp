;; stdout: 20 10 6 nil {"a" {"b" (10 20)}}
(define v {"a" {"b" [10 20]}})
(prn (path v "a.b[1]") (path v ".a.b[0]") (path [5 6] "[1]") (path v "a.zz") (path v ""))

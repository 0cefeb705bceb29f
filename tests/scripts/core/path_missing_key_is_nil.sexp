;; stdout: nil nil
(define m {"a" {"b" 1}})
(prn m.missing m.a.missing)

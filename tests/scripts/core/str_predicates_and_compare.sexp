;; stdout: true false false
;; stdout: true true
(prn (string? "a") (string? 'a) (string? nil))
(prn (equal? "a" "a") (eq? "ab" (str "a" "b")))

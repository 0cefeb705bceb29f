;; stdout: true false true
;; stdout: true false
;; stdout: true true
(prn (string-contains? "hello" "ell") (string-contains? "hello" "xyz") (string-contains? "héllo" "é"))
(prn (string-starts-with? "hello" "he") (string-starts-with? "hello" "lo"))
(prn (string-ends-with? "hello" "lo") (string-ends-with? "hello" ""))

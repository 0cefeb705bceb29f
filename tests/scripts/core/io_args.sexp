;; stdout: ("x" "42" "--flag")
;; stdout: 3 true
;; args: x 42 --flag
(prn *args*)
(prn (length *args*) (string? (car *args*)))

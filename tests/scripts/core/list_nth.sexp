;; stdout: a c
;; stdout: "nth: index 2 is out of range (length 2)"
;; stdout: "nth: index -1 is negative"
(prn (nth '(a b c) 0) (nth '(a b c) 2))
(prn (try (nth '(a b) 2) (catch e e.message)))
(prn (try (nth '(a b) -1) (catch e e.message)))

;; stdout: "substring: range 2..1 is outside the string (length 3)"
;; error: EVAL_ERROR substring: range 0..6 is outside the string (length 5)

(prn (try (substring "abc" 2 1) (catch e e.message)))
(substring "héllo" 0 6)

;; stdout: "cannot access property of nil: a.b (a is nil)"
;; stdout: "invalid array access: [5] (length 2)"
;; stdout: "invalid path `a..b`: empty property name"
(prn (try (path {"a" nil} "a.b") (catch e e.message)))
(prn (try (path [1 2] "[5]") (catch e e.message)))
(prn (try (path {"a" 1} "a..b") (catch e e.message)))

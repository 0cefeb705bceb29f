;; stdout: "cmp failed"
(prn (try (sort '(1 2 3) (fn (a b) (error "cmp failed"))) (catch e e.message)))

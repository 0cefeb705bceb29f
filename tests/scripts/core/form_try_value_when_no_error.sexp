;; stdout: 3
;; stdout: 3
(prn (try (+ 1 2) (catch e 'caught)))
(prn (try 1 2 3 (catch e 'caught)))

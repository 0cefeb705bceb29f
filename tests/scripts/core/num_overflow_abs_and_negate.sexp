;; stdout: "integer overflow"
;; stdout: "integer overflow"
;; stdout: 9223372036854775807
(define min-int -9223372036854775808)
(prn (try (abs min-int) (catch e e.message)))
(prn (try (- min-int) (catch e e.message)))
(prn (abs -9223372036854775807))

;; stdout: "integer overflow"
;; stdout: "integer overflow"
;; stdout: 0 0
(define min-int -9223372036854775808)
(prn (try (/ min-int -1) (catch e e.message)))
(prn (try (quotient min-int -1) (catch e e.message)))
(prn (remainder min-int -1) (modulo min-int -1))

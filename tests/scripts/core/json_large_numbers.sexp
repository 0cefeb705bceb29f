;; stdout: 1.2345678901234567e19
;; stdout: -9223372036854775808
;; stdout: 100.0
(prn (json-parse "12345678901234567890"))
(prn (json-parse "-9223372036854775808"))
(prn (json-parse "1e2"))

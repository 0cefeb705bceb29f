;; stdout: "big"
;; `cond-output` branches with the language's own `cond`, whatever a program calls `cond`.
(define (cond . args) "not this")
(prn (cond-output "{\"n\": 5}" ((> output.n 3) "big") (else "small")))

;; stdout: 1000000 999999 6888891
(define text (json-stringify (range 1000000)))
(define back (json-parse text))
(prn (length back) (last back) (string-length text))

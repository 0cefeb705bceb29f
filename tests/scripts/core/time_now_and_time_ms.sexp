;; stdout: true true
;; stdout: true
;; stdout: true
(define t (time-ms))
(prn (integer? t) (> t 1700000000000))
(prn (string? (re-matches "\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{3}Z" (now))))
(prn (<= t (time-ms)))

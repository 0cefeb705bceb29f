;; stdout: 42
;; stdout: nil
(prn (cond (false) (42) (else 0)))
(prn (cond (nil)))

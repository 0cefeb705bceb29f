;; stdout: false false false false
(define nan (/ 0.0 0.0))
(prn (< nan 1) (> nan 1) (= nan nan) (<= nan nan))

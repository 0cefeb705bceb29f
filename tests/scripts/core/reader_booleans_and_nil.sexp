;; stdout: true false true false nil nil
(prn true false #t #f nil null)

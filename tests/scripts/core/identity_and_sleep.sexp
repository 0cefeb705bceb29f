;; stdout: x nil nil
(prn (identity 'x) (sleep 0) (sleep 0.01))

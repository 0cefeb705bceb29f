;; stdout: nil
(prn (read-line))

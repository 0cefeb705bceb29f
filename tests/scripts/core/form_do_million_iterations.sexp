;; stdout: 499999500000
(prn (do ((i 0 (+ i 1)) (sum 0 (+ sum i))) ((= i 1000000) sum)))

;; stdout:
;; stdout:
(println)
(print)
(prn)

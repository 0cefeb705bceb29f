;; stdout: {"k" 7 "q" v}
;; stdout: (1 7)
(define v 7)
(prn `{"k" ,v "q" v})
(prn `[1 ,v])

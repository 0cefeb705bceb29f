;; stdout: {"k" 5 "k2" 6}
;; stdout: {}
(define v 5)
(prn {"k" v :k2 (+ v 1)})
(prn {})

;; stdout: (3 2 1 0)
;; stdout: nil
;; stdout: (2 1 0)
(prn (do ((i 0 (+ i 1)) (acc '() (cons i acc))) ((= i 4) acc)))
(prn (do ((i 0 (+ i 1))) ((= i 3))))
(define out '())
(do ((i 0 (+ i 1))) ((= i 3) 'done) (set! out (cons i out)))
(prn out)

;; stdout: (2 1 0)
(define fs (do ((i 0 (+ i 1)) (acc '() (cons (fn () i) acc))) ((= i 3) acc)))
(prn (map (fn (f) (f)) fs))

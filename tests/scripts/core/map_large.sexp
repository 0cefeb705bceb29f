;; stdout: 2000 1999 "k0"
(define m (reduce (fn (m i) (assoc m (str "k" i) i)) {} (range 2000)))
(prn (length m) (get m "k1999") (car (keys m)))

;; stdout: 4999
(define text (str (apply str (map (fn (i) "(") (range 5000))) (apply str (map (fn (i) ")") (range 5000)))))
(define data (read text))
(prn (let loop ((d data) (n 0)) (if (null? d) n (loop (car d) (+ n 1)))))

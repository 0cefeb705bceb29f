;; stdout: (0 1 4 9 16)
;; stdout: 3628800
(prn (let loop ((i 0) (acc '())) (if (= i 5) (reverse acc) (loop (+ i 1) (cons (* i i) acc)))))
(prn (let fact ((n 10)) (if (= n 0) 1 (* n (fact (- n 1))))))

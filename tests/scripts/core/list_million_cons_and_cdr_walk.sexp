;; stdout: 1000000 1000000 999999 0 499999
(define (build n)
  (let loop ((i 0) (acc '()))
    (if (= i n) acc (loop (+ i 1) (cons i acc)))))
(define xs (build 1000000))
(define (walk xs n) (if (null? xs) n (walk (cdr xs) (+ n 1))))
(prn (length xs) (walk xs 0) (car xs) (last xs) (nth xs 500000))

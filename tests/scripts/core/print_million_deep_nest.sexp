;; stdout: 2000002
;; stdout: "(((((" "((()))"
(define deep (let loop ((i 0) (acc (list))) (if (= i 1000000) acc (loop (+ i 1) (list acc)))))
(define text (repr deep))
(prn (string-length text))
(prn (substring text 0 5) (substring text 999998 1000004))

;; stdout: a-done b-done c-done
(define (a n) (let ((m (- n 1))) (if (< m 0) 'a-done (a m))))
(define (b n) (let* ((m (- n 1)) (k m)) (if (< k 0) 'b-done (b k))))
(define (c n) (letrec ((m (- n 1))) (if (< m 0) 'c-done (c m))))
(prn (a 1000000) (b 1000000) (c 1000000))

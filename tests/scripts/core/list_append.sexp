;; stdout: (1 2 3 4 5)
;; stdout: () () (1)
;; stdout: true
(prn (append '(1 2) '(3) '() '(4 5)))
(prn (append) (append '()) (append '(1)))
(define tail '(9))
(prn (eq? (cdr (append '(1) tail)) tail))

;; stdout: 60
;; stdin: 10
;; stdin: 20
;; stdin: 30
(define (read-all acc)
  (let ((line (read-line)))
    (if (nil? line) (reverse acc) (read-all (cons (string->number line) acc)))))
(prn (reduce + 0 (read-all '())))

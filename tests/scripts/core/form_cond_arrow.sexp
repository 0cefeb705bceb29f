;; stdout: 50
;; stdout: none
;; stdout: 2 1 nil
(prn (cond ((get {"a" 5} "a") => (fn (v) (* v 10))) (else 0)))
(prn (cond ((get {} "a") => (fn (v) (* v 10))) (else 'none)))
(define (lookup k) (cond ((get {"x" 1} k) => inc) ((get {"y" 2} k) => dec) (else nil)))
(prn (lookup "x") (lookup "y") (lookup "z"))

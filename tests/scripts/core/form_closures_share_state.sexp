;; stdout: 150
(define (account balance)
  (list (fn (n) (set! balance (+ balance n)) balance)
        (fn () balance)))
(define acct (account 100))
((car acct) 50)
(prn ((cadr acct)))

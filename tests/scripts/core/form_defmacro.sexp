;; stdout: 2
;; stdout: nil
;; stdout: 2 1
(defmacro my-unless (test . body) `(if ,test nil (begin ,@body)))
(prn (my-unless false 1 2))
(prn (my-unless true 1))
(defmacro swap! (a b) `(let ((tmp ,a)) (set! ,a ,b) (set! ,b tmp)))
(define p 1)
(define q 2)
(swap! p q)
(prn p q)

;; stdout: 3 false true
(defmacro my-and (. args)
  (cond ((null? args) true)
        ((null? (cdr args)) (car args))
        (else `(if ,(car args) (my-and ,@(cdr args)) false))))
(prn (my-and 1 2 3) (my-and 1 false 3) (my-and))

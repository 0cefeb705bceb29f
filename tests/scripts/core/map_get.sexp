;; stdout: 1 nil 0 nil 1
;; stdout: nil :default
;; stdout: 20 :none
(define m {"a" 1 "b" nil})
(prn (get m "a") (get m "z") (get m "z" 0) (get m "b" 0) (get m :a))
(prn (get nil "a") (get nil "a" :default))
(prn (get '(10 20) 1) (get '(10 20) 5 :none))

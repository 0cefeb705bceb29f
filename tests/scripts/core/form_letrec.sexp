;; stdout: (true true)
(prn (letrec ((ev? (fn (n) (if (= n 0) true (od? (- n 1)))))
              (od? (fn (n) (if (= n 0) false (ev? (- n 1))))))
       (list (ev? 10) (od? 7))))

;; stdout: foo set! list->string + a/b <=>
(prn 'foo 'set! 'list->string '+ 'a/b '<=>)

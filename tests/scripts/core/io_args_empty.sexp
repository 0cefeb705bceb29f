;; stdout: ()
(prn *args*)

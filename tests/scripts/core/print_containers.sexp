;; stdout: (1 (2 ()) {"a" (1 2) "b" {}} nil)
;; stdout: ()
(prn (list 1 (list 2 (list)) {"a" [1 2] "b" {}} nil))
(prn (list))

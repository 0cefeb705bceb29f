;; stdout: 1
; a comment
(prn 1) ; trailing comment (prn 2)
;; (prn 3)

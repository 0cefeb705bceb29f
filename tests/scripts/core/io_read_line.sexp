;; stdout: "first line"
;; stdout: ""
;; stdout: "  spaced é "
;; stdout: nil
;; stdin: first line
;; stdin: 
;; stdin:   spaced é 
(prn (read-line))
(prn (read-line))
(prn (read-line))
(prn (read-line))

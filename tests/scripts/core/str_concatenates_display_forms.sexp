;; stdout: "a1:ksym2.5niltrue(1 \"x\")"
;; stdout: ""
(prn (str "a" 1 :k 'sym 2.5 nil true [1 "x"]))
(prn (str))

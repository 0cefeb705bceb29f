;; stdout: (a 1)
;; stdout: {"k" x}
;; stdout: true
(prn '[a 1])
(prn '{"k" x})
(prn (symbol? (get '{"k" x} "k")))

;; stdout: (integer float string symbol keyword nil boolean list map procedure procedure task-library)
(prn (map type-of [1 1.5 "s" 'sym :kw nil true (list) {} car (fn (x) x) taskLibrary]))

;; stdout: "Ada"
;; stdout: 3
;; stdout: (1 2)
(define (name-of person) person.name)
(prn (name-of {"name" "Ada"}))
(prn (let ((r {"xs" [1 2 3]})) r.xs[2]))
(prn (map (fn (p) p.age) [{"age" 1} {"age" 2}]))

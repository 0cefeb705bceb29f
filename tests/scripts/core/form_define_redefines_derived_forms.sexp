;; stdout: 3
;; stdout: "when was called"
;; stdout: "task 5"
;; stdout: 10
;; `define` and `defmacro` of `when`, `unless`, `cond`, `case` and `do` take
;; effect for the code after them; `cond-output` keeps its own clauses.
(define (when a b) (+ a b))
(prn (when 1 2))
(define (unless . args) "when was called")
(prn (unless true 1))
(define (cond x) (str "task " x))
(prn (cond 5))
(defmacro do (x) `(* ,x 2))
(prn (do 5))

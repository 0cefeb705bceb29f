;; stdout: 7
;; stdout: 8
;; stdout: nil
;; stdout: "ok"
;; A program's macro named like a special form that may be redefined takes effect for
;; the code after it (MAL's own `unless` test). The prelude's `assert` keeps working.
(defmacro unless (pred a b) `(if ,pred ,b ,a))
(prn (unless false 7 8))
(prn (unless true 7 8))
(prn (assert (= 1 1)))
(prn (try (assert false "ok") (catch e (get e "message"))))

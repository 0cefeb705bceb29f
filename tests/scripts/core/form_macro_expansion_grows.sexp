;; error: RESOURCE_EXHAUSTION macro expansion does not terminate

(defmacro grow (x) `(grow (,x)))
(grow 1)

;; stdout: 9
(defmacro with-it (expr . body) `(let ((it ,expr)) ,@body))
(prn (with-it (+ 1 2) (* it it)))

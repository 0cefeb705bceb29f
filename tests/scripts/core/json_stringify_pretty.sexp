;; stdout: {
;; stdout:   "a": [
;; stdout:     1,
;; stdout:     2
;; stdout:   ],
;; stdout:   "b": {
;; stdout:     "c": null
;; stdout:   }
;; stdout: }
;; stdout: [1]
(println (json-stringify {"a" [1 2] "b" {"c" nil}} :pretty true))
(println (json-stringify [1] :pretty false))

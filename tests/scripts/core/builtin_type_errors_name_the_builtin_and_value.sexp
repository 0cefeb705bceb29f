;; stdout: hash-map: expected keys and values in pairs
;; stdout: get-in: expected a list, got a string "a"
;; stdout: merge: expected a map, got an integer 5
;; stdout: keys: expected a map, got a list (1)
;; stdout: string-join: expected a list, got a string "abc"
;; stdout: has-key?: expected a string or keyword key, got an integer 5
;; stdout: symbol->string: expected a symbol, got a string "s"
;; stdout: reduce: expected a list, got an integer 5
;; stdout: range: expected an integer, got a string "a"
;; stdout: sleep: seconds must be between 0 and 1e9
;; stdout: not a procedure: 5 (an integer)
;; stdout: fail: expected 2 to 3 arguments, got 1
(define (message thunk) (try (thunk) (catch e e.message)))
(for-each (fn (m) (println m))
          (map message
               (list (fn () (hash-map :a))
                     (fn () (get-in {"a" 1} "a"))
                     (fn () (merge {"a" 1} 5))
                     (fn () (keys [1]))
                     (fn () (string-join "abc" ","))
                     (fn () (has-key? {} 5))
                     (fn () (symbol->string "s"))
                     (fn () (reduce + 0 5))
                     (fn () (range "a"))
                     (fn () (sleep -1))
                     (fn () (apply 5 (list)))
                     (fn () (fail :x)))))

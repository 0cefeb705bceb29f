;; stdout: "RESOURCE_EXHAUSTION"
;; stdout: "EVAL_ERROR"
(define deep (let loop ((i 0) (acc (list))) (if (= i 1000000) acc (loop (+ i 1) (list acc)))))
(prn (try (json-stringify deep) (catch e e.type)))
(prn (try (json-parse (str (apply str (map (fn (i) "[") (range 100000))) (apply str (map (fn (i) "]") (range 100000))))) (catch e e.type)))

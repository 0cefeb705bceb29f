;; stdout: before
;; error: EVAL_ERROR bad item 3
(println "before")
(pmap (fn (x) (if (> x 2) (error (str "bad item " x)) x)) (range 8) :concurrency 4)
(println "not reached")

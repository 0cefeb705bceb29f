;; stdout: output first
;; error: EVAL_ERROR something broke

(println "output first")
(error "something broke")
(println "never")

;; stdout: 1 20 "snow"
;; stdout: 日本 "日本"
(define é 1)
(define λ [10 20])
(define ☃ {"k" "snow"})
(prn é λ[1] ☃.k)
(prn '日本 (symbol->string '日本))

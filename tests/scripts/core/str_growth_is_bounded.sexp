;; stdout: ("RESOURCE_EXHAUSTION" "memory" 268435456)
;; stdout: "RESOURCE_EXHAUSTION"
;; stdout: "RESOURCE_EXHAUSTION"
;; stdout: still running
(define (double-str s) (double-str (str s s)))
(prn (try (double-str "x") (catch e (list e.type e.details.resource e.details.limit))))
(define (double-join s) (double-join (string-join (list s s) "")))
(prn (try (double-join "x") (catch e e.type)))
(define (double-format s) (double-format (format "{}{}" s s)))
(prn (try (double-format "x") (catch e e.type)))
(println "still running")

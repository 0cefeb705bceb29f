;; stdout: "adds"
;; stdout: true
;; stdout: "expectation_failed"
;; stdout: "5"
;; stdout: "4"
;; stdout: nothing ran
;; A deftest outside `tasklisp test` defines its test without running it; expect forms
;; that pass return true, and one that fails raises expectation_failed.
(prn (deftest adds (println "the body ran") (expect= (+ 1 1) 2)))
(prn (expect= (+ 1 1) 2))
(define e (try (expect= (* 2 2) 5) (catch e e)))
(prn e.reason)
(prn e.details.expected)
(prn e.details.actual)
(println "nothing ran")

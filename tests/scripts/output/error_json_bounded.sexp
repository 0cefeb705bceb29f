;; args: --error-format json
;; error: "reason":"subtask_failure"
;; error: more characters)
; --error-format json is bounded: a failure carrying a 100 KB answer through nested steps
; is printed shortened, with a marker.
(define big (apply str (map (fn (i) "0123456789") (range 10000))))
(set-provider! (fn (req) big))
(deftask fetch () :prompt "go")
(deftask check () (sequential (fetch) (fetch) (fail :llm_error "bad")))
(deftask outer () (sequential (check)))
(outer)

;; stdout: 2
;; stdout: "item 2: no c"
;; stdout: 1
;; stdout: "item 1: no b"
;; stdout: 0
;; stdout: ("a" {"type" "TASK_FAILURE" "reason" "llm_error" "message" "item 1: no b" "content" "" "notes" {} "details" {"index" 1} "location" {"file" "batch_errors.sexp" "line" 10 "column" 35} "index" 1} "c")
;; stdout: ("a" "c")
;; stdout: 1
; An error raised for an item of a batch names the item.
(define (check x) (if (= x "a") x (fail :llm_error (str "no " x))))
(define e (try (map (fn (x) (if (= x "c") (error "no c") x)) ["a" "b" "c"]) (catch e e)))
(prn e.details.index)
(prn e.message)
(define f (try (for-each check ["a" "b"]) (catch e e)))
(prn f.details.index)
(prn f.message)
(prn (try (filter check ["b"]) (catch e e.details.index)))
; pmap :on-error :collect keeps each failure's error map in its place; :skip leaves it out
(prn (pmap (fn (x) (if (= x "b") (check x) x)) ["a" "b" "c"] :on-error :collect))
(prn (pmap (fn (x) (if (= x "b") (check x) x)) ["a" "b" "c"] :on-error :skip))
(prn (try (pmap check ["a" "b"]) (catch e e.details.index)))

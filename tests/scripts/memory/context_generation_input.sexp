;; stdout: ("context" "matches" "context_summary" "error")
;; stdout: ("fixtures/docs/billing.md") nil
;; stdout: "1 file matched, best first: fixtures/docs/billing.md (1.0)."
;; stdout: "INHERITED" "EARLIER"
;; stdout: ("fixtures/docs/guide/setup.md")
;; stdout: "context_parsing_failure" "query" "get-context: the ContextGenerationInput field `query` must be a string, got 42"
;; stdout: "context_parsing_failure" "qurey"
;; stdout: () "context_parsing_failure: get-context: the ContextGenerationInput field `query` must be a string, got 42"
;; stdout: true ()
; seed 002's ContextGenerationInput: every field feeds the search
(define r (get-context {"query" "invoices" "templateDescription" "billing questions"
                        "inputs" {"customer" "monthly"}}
                       :dir "fixtures/docs" :limit 1))
(prn (keys r))
(prn (map (fn (m) m.path) r.matches) r.error)
(prn r.context_summary)
; inherited context and previous outputs head the context
(define h (get-context {"query" "invoices" "inheritedContext" "INHERITED" "previousOutputs" "EARLIER"}
                       :dir "fixtures/docs" :limit 1))
(prn (first (string-split h.context "\n\n")) (nth (string-split h.context "\n\n") 1))
; matching_strategy picks the strategy
(define by-name (get-context {"query" "setup" "matching_strategy" "metadata"} :dir "fixtures/docs" :limit 1))
(prn (map (fn (m) m.path) by-name.matches))
; a field of the wrong type is context_parsing_failure, naming the field
(define e (try (get-context {"query" 42} :dir "fixtures/docs") (catch e e)))
(prn e.reason e.details.path e.message)
(define u (try (get-context {"qurey" "x"} :dir "fixtures/docs") (catch e e)))
(prn u.reason u.details.path)
; :on-error :result returns the failure in `error` instead of raising it
(define soft (get-context {"query" 42} :dir "fixtures/docs" :on-error :result))
(prn soft.matches soft.error)
(define missing (get-context "invoices" :dir "fixtures/no-such-dir" :on-error :result))
(prn (string? missing.error) missing.matches)

;; stdout: ("bug: crash" "bug: hang")
;; stdout: ("question: why")
;; stdout: "bug: crash"
;; stdout: true
;; stdout: false
;; stdout: 2
;; stdout: ("a" "bb" "ccc")
;; stdout: "output_format_failure"
;; stdout: "a predicate task must answer true or false: `unsure` answered \"maybe\""
; A task given where a predicate is expected is judged by its boolean parsedContent.
(set-provider! (fn (req)
                 (cond ((string-contains? req.prompt "shorter") (str (< (string-length req.params.a) (string-length req.params.b))))
                       ((string-contains? req.prompt "unsure") "\"maybe\"")
                       (else (str (string-starts-with? req.params.text "bug"))))))
(deftask is-bug (text) :prompt "Is this a bug? {{text}}" :output "json")
(define issues ["bug: crash" "question: why" "bug: hang"])
(prn (filter is-bug issues))
(prn (remove is-bug issues))
(prn (find is-bug issues))
(prn (any? is-bug issues))
(prn (every? is-bug issues))
(prn (count is-bug issues))
(deftask shorter? (a b) :prompt "shorter {{a}} {{b}}" :output "json")
(prn (sort ["ccc" "a" "bb"] shorter?))
; an answer that is not a boolean fails
(deftask unsure (text) :prompt "unsure {{text}}" :output "json")
(define e (try (filter unsure issues) (catch e e)))
(prn e.reason)
(prn (substring e.message 8))

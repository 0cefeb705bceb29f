;; Tests of the support-reply workflow. `tasklisp test examples/` replays the model's
;; answers from support_reply.test.cassette.jsonl; `--record` with a real provider
;; refreshes them.

(load "support_reply.sexp")

(define crash "The app crashes every time I open the settings page.")
(define invoice "I was charged twice for my subscription this month.")

(deftest labels-follow-the-schema
  (expect-schema (classify-ticket crash)
                 {"type" "object" "required" ["category" "urgent"]}))

(deftest a-crash-is-an-urgent-bug
  (define label (get (classify-ticket crash) "parsedContent"))
  (expect= label.category "bug")
  (expect label.urgent))

(deftest a-double-charge-is-billing
  (expect= (get-in (classify-ticket invoice) ["parsedContent" "category"]) "billing"))

(deftest the-reply-is-polite
  (expect-judge (support-reply crash)
                "The reply is polite, acknowledges the crash and promises no date."))

(deftest a-ticket-is-required
  (expect-error (support-reply) "input_validation_failure"))

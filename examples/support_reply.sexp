;; A support-reply workflow: a model labels a ticket as JSON, then drafts a reply in
;; the tone the label calls for. It sets no provider: whoever runs it chooses one, and
;; its tests (support_reply.test.sexp) replay a recorded cassette.
;;
;;   tasklisp --provider openai --model gpt-4o-mini run examples/support_reply.sexp
;;   tasklisp test examples/

(deftask classify-ticket (ticket)
  :description "Label a support ticket"
  :system "You triage support tickets. Answer with JSON {category, urgent}."
  :prompt "Ticket: {{ticket}}"
  :output "json"
  :schema {"type" "object"
           "properties" {"category" {"enum" ["bug" "billing" "question"]}
                         "urgent" {"type" "boolean"}}
           "required" ["category" "urgent"]})

(deftask draft-reply (ticket category)
  :description "Draft a reply to a ticket"
  :system "You write short, polite replies to customers. Never promise dates."
  :prompt "Write a reply to this {{category}} ticket: {{ticket}}")

(deftask support-reply (ticket)
  :description "Label a ticket, then draft the reply its label calls for"
  (sequential
    (classify-ticket ticket)
    (draft-reply ticket step_results[0].parsedContent.category)))

(when (= (length *args*) 1)
  (println (get (support-reply (first *args*)) "content")))

;; Providers: the same task, answered by different models. See docs/PROVIDERS.md.
;;
;;   tasklisp --provider echo run examples/providers.sexp     ; echo: the prompts come back
;;   tasklisp --provider ollama --model llama3.2 run examples/providers.sexp
;;   TASKLISP_CASSETTE=haiku.jsonl tasklisp --provider record:ollama --model llama3.2 run examples/providers.sexp
;;   TASKLISP_CASSETTE=haiku.jsonl tasklisp --provider replay run examples/providers.sexp

(deftask haiku (topic)
  :system "You write haiku. Answer with the poem only."
  :prompt "A haiku about {{topic}}.")

(println (get (haiku "autumn rain") "content"))

;; A provider written in the language, for one block.
(with-provider (fn (request) (string-upcase (get request "prompt")))
  (println (get (haiku "the sea") "content")))

;; Provider failures are TASK_FAILURE / llm_error, and catchable.
(try
  (with-provider (fn (request) (fail :llm_error "the model is down"))
    (haiku "snow"))
  (catch e (println "caught:" (get e "reason") "-" (get e "message"))))

;; A local program as the model: the prompt on its stdin, the answer on its stdout.
(set-provider! :command {"command" ["tr" "a-z" "A-Z"]})
(println (get (haiku "wind") "content"))

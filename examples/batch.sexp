(set-provider! :openai {"base_url" (str "http://127.0.0.1:" (first *args*) "/v1")
                        "model" "gpt-4o-mini"})
(deftask label (text) :prompt "Label as bug or feature: {{text}}")
(prn (pmap (fn (text) (get (label text) "content"))
           ["crash on start" "add dark mode"]
           :batch true))

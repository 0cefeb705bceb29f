;; stdout: "2: --- step 0 (first) ---\nfirst says hi\n--- step 1 ---\n{\"n\":1}"
;; stdout: "2: --- step 0 (first) ---\n{\"task\":\"first\",\"rounds\":1}\n--- step 1 ---\n{}"
;; error: unknown sequential option :accumulat
; (sequential :accumulate "full_output"|"notes_only" …) gives each step {{accumulated}}:
; the earlier steps' content, or only their notes
(set-provider! (fn (req) (str (if (= req.task "first") "first says hi" req.prompt))))
(deftask first () :prompt "first")
(deftask later (n) :prompt "{{n}}: {{accumulated}}")
(deftask full () (sequential :accumulate "full_output" (first) {"n" 1} (later 2)))
(prn (get (full) "content"))
(deftask notes () (sequential :accumulate "notes_only" (first) {"n" 1} (later 2)))
(prn (get (notes) "content"))
(sequential :accumulat "full_output" (first))

;; stdout: ("fixtures/docs/auth.md" "fixtures/docs/billing.md")
;; stdout: (1.0 0.243)
;; stdout: "# Login and sessions\nUsers log in with a password.\nSessions expire after one hour of inactivity."
;; stdout: ("fixtures/docs/auth.md")
;; stdout: "--- fixtures/docs/auth.md ---\n# Login and sessions\nUsers log in with a password.\nSessions expire after one hour of inactivity."
;; stdout: ("fixtures/docs/guide/setup.md")
;; stdout: "Setup"
;; stdout: ("fixtures/docs/billing.md" "fixtures/docs/auth.md")
;; stdout: ()
;; stdout: ("TASK_FAILURE" "context_retrieval_failure")
;; stdout: ("TASK_FAILURE" "context_retrieval_failure")
;; stdout: ("TASK_FAILURE" "context_matching_failure")
; get-context ranks the UTF-8 files below :dir by BM25; binary and non-UTF-8 files are skipped
(define (paths r) (map (fn (m) m.path) r.matches))
(define r (get-context "password session" :dir "fixtures/docs"))
(prn (paths r))
(prn (map (fn (m) m.relevance) r.matches))
(prn (get (first r.matches) "excerpt"))
; :limit keeps the best
(define one (get-context "password session" :dir "fixtures/docs" :limit 1))
(prn (paths one))
(prn one.context)
; metadata: the path and the first heading
(define m (get-context "setup guide" :dir "fixtures/docs" :strategy "metadata"))
(prn (paths m))
(prn (get (first m.matches) "excerpt"))
; :files ranks just those (below :dir when given)
(prn (paths (get-context "invoice password" :dir "fixtures/docs" :files ["auth.md" "billing.md"])))
; nothing matches: no matches
(prn (paths (get-context "zebra" :dir "fixtures/docs")))
; a file that cannot be read, a directory that does not exist, a query with no words
(define (failure thunk) (try (thunk) (catch e [e.type e.reason])))
(prn (failure (fn () (get-context "x" :files ["fixtures/docs/missing.md"]))))
(prn (failure (fn () (get-context "x" :dir "fixtures/nowhere"))))
(prn (failure (fn () (get-context "?!" :dir "fixtures/docs"))))

;; A code review run offline: the templates come from an XML library, the "model" is a
;; provider written in the language that answers by task.
;;   tasklisp run examples/review.sexp

(import "templates/code_review.xml" :as cr)

;; Canned answers keyed by what the prompt is about, so the flow takes every branch.
(define (classification diff)
  (cond ((string-contains? diff "password") "{\"kind\": \"bugfix\", \"risk\": 4, \"security\": true}")
        ((string-contains? diff "scheduler") "{\"kind\": \"feature\", \"risk\": 5, \"security\": false}")
        (else "{\"kind\": \"docs\", \"risk\": 1, \"security\": false}")))

(define (offline-model request)
  (let ((task request.task)
        (prompt request.prompt))
    (cond ((= task "cr/summarize_diff") "Tightens how the change handles its inputs.")
          ((= task "cr/classify_change") (classification prompt))
          ((= task "cr/security_review") "1. The password is compared with ==, not in constant time.")
          ((= task "cr/senior_review") "1. What happens under load? 2. How is it rolled back? 3. Who is paged?")
          ((= task "cr/quick_approve") "LGTM, thanks for the clear docs.")
          (else prompt))))

(set-provider! offline-model)

(define changes
  [{"title" "Fix login check" "diff" "- if password == stored:\n+ if check_password(password, stored):"}
   {"title" "New job scheduler" "diff" "+ class scheduler:\n+     def run(self): ..."}
   {"title" "Typo in README" "diff" "- teh\n+ the"}])

(for-each
  (fn (change)
    (let ((review (cr/review_change change.diff)))
      (println (str "## " change.title))
      (println review.content)
      (newline)))
  changes)

;; The reduce task folds the notes through `append_note` (the offline model echoes it).
(println (get (cr/collect_notes ["tests pass" "docs updated"]) "content"))

;; A script task: the size of a diff written to a temporary file.
(define diff-file "/tmp/tasklisp-review-example.diff")
(write-file diff-file (get (first changes) "diff"))
(define wc-output (string-trim (get (cr/count_lines diff-file) "content")))
(println (str "diff lines: " (first (string-split wc-output " "))))

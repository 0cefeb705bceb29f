;; A script pipeline over files: external programs as tasks, composed like functions.
;;
;; It makes a scratch directory of notes, counts words and TODOs in each file with
;; script tasks, folds the counts into a report with reduce-task, and asks a
;; (language-written, offline) model for a one-line verdict.
;;
;;   tasklisp run examples/file_pipeline.sexp

(deftask make-scratch () :command ["mktemp" "-d"])
(deftask list-files (dir pattern)
  :command (str "ls " dir "/" pattern " | sort") :shell true)
(deftask word-count (path) :command ["wc" "-w"] :stdin (read-file path) :timeout 10)
(deftask todo-count (path) :command ["grep" "-c" "TODO" path])
(deftask remove-dir (dir) :command ["rm" "-r" dir])

(define dir (string-trim (get (make-scratch) "content")))
(write-file (str dir "/a.txt") "Ship the release notes. TODO: proofread.\n")
(write-file (str dir "/b.txt") "TODO: benchmarks\nTODO: docs\nEverything else is done.\n")
(write-file (str dir "/c.txt") "Nothing left to do here.\n")

(define files (string-split (string-trim (get (list-files dir "*.txt") "content")) "\n"))

;; grep exits 1 when nothing matches: that is a tool_execution_error we can read.
(define (todos path)
  (try (string->number (string-trim (get (todo-count path) "content")))
       (catch e (if (= e.details.script_exit_code 1) 0 (raise e)))))

(define (stats path)
  {"file" (last (string-split path "/"))
   "words" (string->number (string-trim (get (word-count path) "content")))
   "todos" (todos path)})

(define rows (map stats files))
(for-each (fn (row) (println (format "{}: {} words, {} TODOs" row.file row.words row.todos))) rows)

;; reduce-task folds with any procedure; the result is a TaskResult.
(define totals
  (reduce-task (fn (acc row) {"words" (+ acc.words row.words) "todos" (+ acc.todos row.todos)})
               {"words" 0 "todos" 0}
               rows))
(println "totals:" totals.content)

(set-provider! (fn (request)
                 (if (> request.params.totals.todos 2) "not ready: finish the TODOs" "ready to ship")))
(deftask verdict (totals) :prompt "Given {{totals}}, is the release ready?")
(println "verdict:" (get (verdict totals.parsedContent) "content"))

(remove-dir dir)

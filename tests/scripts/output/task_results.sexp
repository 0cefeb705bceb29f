;; stdout: task-result
;; stdout: {"content" "ok" "status" "CONTINUATION" "parsedContent" true "notes" {"why" "more"} "criteria" "all"}
;; stdout: task-result
;; stdout: task-result
;; stdout: task-result
;; stdout: task-result
;; stdout: map
;; stdout: map
;; stdout: "EVAL_ERROR"
; TaskResults are data: built with task-result, kept through assoc, dissoc, merge, update.
(define r (task-result "ok" :status "CONTINUATION" :parsed true :notes {"why" "more"} :criteria "all"))
(prn (type-of r))
(prn r)
(prn (type-of (assoc r "content" "changed")))
(prn (type-of (dissoc r "criteria")))
(prn (type-of (merge r {"status" "FAILED"})))
(prn (type-of (update r "content" string-upcase)))
; no longer a TaskResult when content is not a string or status not a status
(prn (type-of (assoc r "content" 1)))
(prn (type-of (assoc r "status" "DONE")))
(prn (try (task-result "x" :status "DONE") (catch e e.type)))

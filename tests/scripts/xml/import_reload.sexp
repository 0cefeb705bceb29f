;; stdout: "Old: x"
;; stdout: "Old: x"
;; stdout: "New: x"
;; stdout: ("say")
;; A plain import of a file imported before does nothing; `:reload true` imports it
;; again and replaces its tasks.
(set-provider! "echo") ; the prompt comes back as the answer
(define path (str "/tmp/tasklisp-reload-" (time-ms) ".xml"))
(define (template text)
  (str "<tasks><task name=\"say\" type=\"atomic\"><inputs><input name=\"w\"/></inputs><instructions>"
       text ": {{w}}</instructions></task></tasks>"))
(write-file path (template "Old"))
(import path)
(prn (get (say "x") "content"))
(write-file path (template "New"))
(import path)
(prn (get (say "x") "content"))
(define names (import path :reload true))
(prn (get (say "x") "content"))
(prn names)

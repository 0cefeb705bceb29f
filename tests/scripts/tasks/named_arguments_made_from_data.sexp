;; A keyword read before the task naming it was defined still names its parameter.
;; stdout: "hi"
;; stdout: "task `zz-echo`: unknown named argument :zz-other"
;; stdout: "task `zz-echo`: too many arguments: it takes 1 and argument 2 is extra: \"x\""
(define early-kw (read ":zz-param"))
(eval (read "(deftask zz-echo (zz-param) :command (list \"echo\" zz-param))"))
(define zz-echo-task (eval (read "zz-echo")))
(prn (string-trim (get (apply zz-echo-task (list early-kw "hi")) "content")))
(prn (try (apply zz-echo-task (list (read ":zz-other") "x")) (catch e e.message)))
(prn (try (apply zz-echo-task (list (string->symbol "zz-param") "x")) (catch e e.message)))

;; stdout: ("u/greeting" "u/shout" "u/greet-loudly" "u/welcome" "u/loaded-times")
;; stdout: "HELLO, ADA"
;; stdout: "Welcome, Bo"
;; stdout: false
;; stdout: ()
;; stdout: loading loaded.sexp
;; stdout: 42
;; stdout: loading loaded.sexp
;; stdout: 42
(set-provider! (fn (req) req.prompt))
(prn (import "templates/modules/util.sexp" :as u))
(prn (u/greet-loudly "Ada"))
(prn (get (u/welcome "Bo") "content"))
; nothing but the namespaced names was defined
(prn (contains? (task-names) "welcome"))
; a second import of the same module does nothing
(prn (import "templates/modules/util.sexp" :as u))
; load runs the file every time and returns its last value
(prn (load "templates/modules/loaded.sexp"))
(prn (load "templates/modules/loaded.sexp"))

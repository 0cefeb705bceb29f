;; stdout: "SYNTAX_ERROR: bad syntax: expected (quote datum)"
;; stdout: "SYNTAX_ERROR: bad syntax: expected (quasiquote datum)"
;; stdout: "SYNTAX_ERROR: bad syntax: expected (if test then else?)"
;; stdout: "SYNTAX_ERROR: bad syntax: expected (when test body…)"
;; stdout: "SYNTAX_ERROR: bad syntax: expected (unless test body…)"
;; stdout: "SYNTAX_ERROR: a cond clause is (test body…)"
;; stdout: "SYNTAX_ERROR: bad syntax: expected (case key ((datum…) body…)… (else body…))"
;; stdout: "SYNTAX_ERROR: a case clause is ((datum…) body…)"
;; stdout: "SYNTAX_ERROR: bad syntax: expected (define name value) or (define (name params…) body…)"
;; stdout: "SYNTAX_ERROR: define needs a name"
;; stdout: "SYNTAX_ERROR: (define name value) takes one value"
;; stdout: "SYNTAX_ERROR: bad syntax: expected (set! name value)"
;; stdout: "SYNTAX_ERROR: bad syntax: expected (lambda (params…) body…)"
;; stdout: "SYNTAX_ERROR: bad syntax: expected (let ((name value)…) body…)"
;; stdout: "SYNTAX_ERROR: bad syntax: expected (let name ((var init)…) body…)"
;; stdout: "SYNTAX_ERROR: a binding is (name value)"
;; stdout: "SYNTAX_ERROR: a binding is (name value)"
;; stdout: "SYNTAX_ERROR: bad syntax: expected (letrec ((name value)…) body…)"
;; stdout: "SYNTAX_ERROR: bad syntax: expected (do ((var init step)…) (test result…) body…)"
;; stdout: "SYNTAX_ERROR: a do variable is (var init step?)"
;; stdout: "SYNTAX_ERROR: do needs an exit clause (test result…)"
;; stdout: "SYNTAX_ERROR: do needs a list of (var init step)"
;; stdout: "SYNTAX_ERROR: bad syntax: expected (try expr (catch e body…))"
;; stdout: "SYNTAX_ERROR: catch needs a variable: (catch e body…)"
;; stdout: "SYNTAX_ERROR: catch needs a variable: (catch e body…)"
;; stdout: "SYNTAX_ERROR: bad syntax: expected (defmacro name (params…) body…)"
;; stdout: "SYNTAX_ERROR: bad syntax: expected (defmacro name (params…) body…)"
;; stdout: "SYNTAX_ERROR: macro parameters are a list of symbols"
;; stdout: "SYNTAX_ERROR: bad syntax: expected (expect expr)"
;; stdout: "SYNTAX_ERROR: bad syntax: expected (expect= actual expected)"
;; stdout: "SYNTAX_ERROR: bad syntax: expected (if test then else?)"
; Every special form with too few parts, or parts of the wrong shape, whether written,
; built as data and evaluated, or made by a macro, is a syntax error a program can catch.
(define (analyse code)
  (try (eval (read code)) (catch e (str e.type ": " e.message))))
(defmacro broken-if () '(if))
(for-each
  (fn (code) (prn (analyse code)))
  ["(quote)" "(quasiquote 1 2)" "(if 1)" "(when)" "(unless)" "(cond ())" "(case)"
   "(case 1 ())" "(define)" "(define ())" "(define x 1 2)" "(set! x)" "(lambda)"
   "(let)" "(let loop)" "(let ((x 1 2)) x)" "(let* (()) 1)" "(letrec)" "(do)"
   "(do ((x)) (true))" "(do ((x 1)) ())" "(do x (true))" "(try)" "(try 1 (catch))"
   "(try 1 (catch 5 x))" "(defmacro)" "(defmacro m)" "(defmacro m 5)" "(expect)"
   "(expect= 1)" "(broken-if)"])

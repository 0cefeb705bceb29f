;; stdout: "outer: x"
;; stdout: "inner: x"
;; stdout: "innermost: x"
;; stdout: "inner: x"
;; stdout: "outer: x"
;; stdout: "caught: provider down"
;; stdout: "outer: x"
;; stdout: "x"
;; stdout: 7
(deftask t (x) :prompt "{{x}}")
(set-provider! (fn (req) (str "outer: " req.prompt)))
(prn (get (t "x") "content"))
(with-provider (fn (req) (str "inner: " req.prompt))
  (prn (get (t "x") "content"))
  (with-provider (fn (req) (str "innermost: " req.prompt))
    (prn (get (t "x") "content")))
  (prn (get (t "x") "content")))
(prn (get (t "x") "content"))
; the previous provider comes back also on error
(prn (try (with-provider (fn (req) (error "provider down")) (t "x"))
          (catch e (str "caught: " e.message))))
(prn (get (t "x") "content"))
(prn (with-provider "echo" (get (t "x") "content")))
(prn (with-provider "echo" 1 (+ 3 4)))

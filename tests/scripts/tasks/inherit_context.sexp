;; stdout: 101
;; stdout: 11
;; stdout: (1 5 "global-z")
;; stdout: "unbound symbol: w"
;; stdout: "subset"
;; stdout: ("y" "z")
;; stdout: "none"
;; stdout: ":context-keys goes with :inherit-context \"subset\""
(define x 10)
(define z "global-z")
(deftask full (a) (+ a x))
(deftask none (a) :inherit-context "none" (+ a x))
(deftask some (a) :context-keys [y z] (list a y z))
(deftask some-not-w (a) :inherit-context "subset" :context-keys ["y"] (list a w))
; full (the default): the caller's environment
(prn (get (let ((x 100)) (full 1)) "parsedContent"))
; none: the global environment
(prn (get (let ((x 100)) (none 1)) "parsedContent"))
; subset: copies of the named bindings of the caller, over the globals
(prn (get (let ((y 5)) (some 1)) "parsedContent"))
(prn (try (let ((w 1)) (some-not-w 1)) (catch e e.message)))
(prn some.inherit_context)
(prn some.context_keys)
; an empty key list says nothing; keys with "full" or "none" are an error
(deftask quiet () :inherit-context "none" :context-keys [] "x")
(prn quiet.inherit_context)
(prn (try (deftask loud () :inherit-context "none" :context-keys [a] "x") (catch e e.message)))

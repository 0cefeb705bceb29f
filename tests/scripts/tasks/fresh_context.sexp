;; stdout: "outer"
;; stdout: "global only"
;; stdout: true "none"
;; error: VALIDATION_ERROR fresh-context
; :fresh-context true runs a task with nothing inherited from its caller
(define where "global only")
(deftask peek () :fresh-context true (str where))
(deftask sees () (str where))
(define (inner) (let ((where "outer")) (list (get (sees) "content") (get (peek) "content"))))
(define both (inner))
(prn (first both))
(prn (second both))
(prn peek.fresh_context peek.inherit_context)
(deftask bad () :fresh-context true :inherit-context "full" 1)

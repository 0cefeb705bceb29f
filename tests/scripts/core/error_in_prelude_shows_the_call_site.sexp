;; error: EVAL_ERROR <prelude> called from error_in_prelude_shows_the_call_site.sexp:4:6
(define xs '(1 2))
(define (pick pred) (find pred xs))
(prn (find 5 xs))

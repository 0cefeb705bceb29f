;; error: EVAL_ERROR <prelude> called from error_in_prelude_shows_the_call_site.sexp:4:6
(define counts {"k" "not a number"})
(define (bump m) (update m "k" inc))
(prn (update counts "k" inc))

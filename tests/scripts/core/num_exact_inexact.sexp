;; stdout: 1.0 2 5
;; error: EVAL_ERROR inexact->exact

(prn (exact->inexact 1) (inexact->exact 2.0) (inexact->exact 5))
(inexact->exact 2.5)

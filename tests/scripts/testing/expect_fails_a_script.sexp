;; error: EVAL_ERROR expectation_failed expect-schema failed expected: actual:
;; A failed check outside a test ends a script like any error.
(expect-schema [1 2] "object")

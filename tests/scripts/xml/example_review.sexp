;; stdout: ## Fix login check
;; stdout: 1. The password is compared with ==, not in constant time.
;; stdout:
;; stdout: ## New job scheduler
;; stdout: 1. What happens under load? 2. How is it rolled back? 3. Who is paged?
;; stdout:
;; stdout: ## Typo in README
;; stdout: LGTM, thanks for the clear docs.
;; stdout:
;; stdout: Review notes:
;; stdout: - tests pass
;; stdout: - docs updated
;; stdout: diff lines: 1
; The example in examples/ keeps working: it runs offline with a provider in the language.
(load "../../../examples/review.sexp")

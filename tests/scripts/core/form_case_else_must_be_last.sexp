;; error: SYNTAX_ERROR else must be the last case clause

(case 1 (else 2) ((1) 3))

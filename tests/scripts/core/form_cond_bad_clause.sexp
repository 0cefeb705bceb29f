;; error: SYNTAX_ERROR a cond clause is (test body…)

(cond 5)

;; error: SYNTAX_ERROR expected (deftest name body…)
(deftest 42 (expect true))

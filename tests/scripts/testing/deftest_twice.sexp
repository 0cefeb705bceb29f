;; error: EVAL_ERROR the test `same` is defined twice
(deftest same (expect true))
(deftest same (expect false))

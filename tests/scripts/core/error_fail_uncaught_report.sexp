;; error: TASK_FAILURE my_reason it broke

(fail :my_reason "it broke")

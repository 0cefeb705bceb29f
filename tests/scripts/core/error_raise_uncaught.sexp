;; error: TASK_FAILURE subtask_failure step 2 failed

(raise {"type" "TASK_FAILURE" "reason" "subtask_failure" "message" "step 2 failed" "details" {}})

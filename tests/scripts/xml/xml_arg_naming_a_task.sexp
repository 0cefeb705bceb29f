;; error: VALIDATION_ERROR <arg> `classify` names the task classify, not data task_as_arg.xml:13:48
(import "templates/task_as_arg.xml")

;; stdout: true nil
;; stdout: "C.UTF-8"
(prn (string? (getenv "HOME")) (getenv "TASKLISP_SURELY_UNSET_VARIABLE"))
(prn (getenv "LC_ALL"))

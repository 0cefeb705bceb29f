;; stdout: task-library ()
;; stdout: task-library
(prn (type-of taskLibrary) (task-names))
(prn (let ((a 1)) (let ((b 2)) (type-of taskLibrary))))

;; error: EVAL_ERROR read-file: cannot read /nonexistent/dir/file.txt

(read-file "/nonexistent/dir/file.txt")

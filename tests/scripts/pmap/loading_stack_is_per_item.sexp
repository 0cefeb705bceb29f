;; stdout: ("from a.sexp" "the data beside the case\n")
;; While one item is inside a `load` (and waits there), another item's relative path
;; still resolves against the case's own directory, not the file the first item loads.
(prn (pmap (fn (job)
             (if (= job "load")
                 (begin (load "fixtures/loading/a.sexp") loaded-value)
                 (begin (sleep 0.05) (read-file "fixtures/data.txt"))))
           ["load" "read"]
           :concurrency 2))

;; Symbols and keywords read or made from data at run time are the same symbols as
;; interned ones of their names, to every operation (only their memory differs).
;; stdout: true
;; stdout: true true
;; stdout: true
;; stdout: false false
;; stdout: true true
;; stdout: 1
;; stdout: 5
;; stdout: (:zz-kw-4 zz-sym-4 (zz-data-5 :zz-data-6))
;; stdout: true true false false
;; stdout: symbol keyword
;; stdout: zz-print :zz-print zz-a.b[0] "zz-n" ":zz-n"
;; stdout: (zz-w :zz-w)
;; stdout: (zz-d :zz-d)
;; stdout: "[\"zz-j\",\"zz-j\"]"
;; stdout: c
;; stdout: true
;; stdout: 1
;; stdout: (zz-u :zz-u)
;; stdout: {"zz-key" 1 "zz-kk" 2}
;; stdout: 1 2 true
;; stdout: {"zz-f" 3}
;; stdout: "{\"a\":1}"
;; stdout: "zz-reason"
(prn (eq? (read "zz-new-1") 'zz-new-1))
(prn (eq? (read "zz-new-2") (read "zz-new-2")) (eq? (read ":zz-kw-2") (read ":zz-kw-2")))
(prn (equal? (list (read "a9")) (list (string->symbol "a9"))))
(prn (eq? (read "zz-sym-3") (read ":zz-sym-3")) (equal? (read "zz-s") "zz-s"))
(define early (read "zz-late"))
(eval (read "(define zz-late 1)"))
(prn (eq? early (read "zz-late")) (equal? (list early) (list (string->symbol "zz-late"))))
(prn (eval (read "zz-late")))
(eval (read "(define zz-q 5)"))
(prn zz-q)
(prn (eval (read "(list :zz-kw-4 'zz-sym-4 (quote (zz-data-5 :zz-data-6)))")))
(prn (symbol? (read "zz-p")) (keyword? (read ":zz-p")) (symbol? (read ":zz-p")) (keyword? (read "zz-p")))
(prn (type-of (read "zz-t")) (type-of (read ":zz-t")))
(prn (read "zz-print") (read ":zz-print") (read "zz-a.b[0]") (symbol->string (read "zz-n")) (str (read ":zz-n")))
(write (list (read "zz-w") (read ":zz-w")))
(newline)
(display (list (read "zz-d") (read ":zz-d")))
(newline)
(prn (json-stringify (list (read "zz-j") (read ":zz-j"))))
(prn (case (read "zz-c") ((zz-a zz-b) 'ab) ((zz-c) 'c) (else 'none)))
(prn (contains? (list (string->symbol "zz-x") (string->symbol "zz-m")) (read "zz-m")))
(prn (index-of (list (read ":zz-i0") (read ":zz-i1")) (read ":zz-i1")))
(prn (distinct (list (read "zz-u") (string->symbol "zz-u") (read ":zz-u"))))
(prn (read "{zz-key 1 :zz-kk 2}"))
(prn (get (hash-map (read ":zz-hk") 1) "zz-hk") (get {"zz-g" 2} (read "zz-g")) (contains? {"zz-g" 2} (read ":zz-g")))
(prn (frequencies (list (read "zz-f") (read "zz-f") (read ":zz-f"))))
(prn (apply json-stringify (list {"a" 1} (read ":pretty") false)))
(prn (try (fail (read ":zz-reason") "boom") (catch e e.reason)))

;; stdout: (a b c) x (1 "s" :k (nested)) () 5
;; stdout: true true
(prn (quote (a b c)) 'x '(1 "s" :k (nested)) '() (quote 5))
(prn (symbol? 'a) (list? '(a)))

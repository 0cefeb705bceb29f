;; N atomic calls through pmap at CONCURRENCY; prints the seconds taken.
;; tasklisp --provider openai --model gpt-4o-mini --base-url URL run calls.sexp N CONCURRENCY
(deftask ask (i) :prompt "item {{i}}")
(define n (string->number (car *args*)))
(define concurrency (string->number (cadr *args*)))
(define timed (time (fn () (pmap ask (range n) :concurrency concurrency))))
(unless (= (get (nth timed.value 5) "content") "ok: item 5") (error "wrong answer"))
(println (/ timed.ms 1000.0))

;; stdout: (1 2 3)
;; stdout: ((2 3) (1 3) (0 3))
;; stdout: done
;; stdout: (6 1 8 3)
;; stdout: true
;; stdout: (2 1)
;; stdout: ((2 10 22 30 true) (1 10 21 30 true) (0 10 20 30 true))
;; stdout: ((1 5) ())
;; stdout: 1000000
;; stdout: (6 1 2 3 4 5 6 7 14 9)
;; stdout: ((2 10 9) (1 9 9) (0 8 9))
;; stdout: (1 3)
;; stdout: (1 3)
;; stdout: (1 3)
;; stdout: (11 11 11)
;; stdout: 3
;; stdout: (3 #<procedure loop>)
;; stdout: (3 #<procedure loop>)
;; stdout: (1 3)
;; stdout: (1 3)
;; stdout: (1 2)
;; A procedure calling itself from its tail reuses its frame: the new arguments are
;; stored over the old ones, a parameter passed on unchanged is left in place. A closure
;; made in the frame keeps the values it saw, since the call then takes a new frame.
(define (collect k acc) (if (= k 0) acc (collect (- k 1) (cons (fn () k) acc))))
(prn (map (fn (f) (f)) (collect 3 '())))
(prn (let loop ((i 0) (n 3) (fs '()))
       (if (= i n) (map (fn (f) (f)) fs) (loop (+ i 1) n (cons (fn () (list i n)) fs)))))
;; A body's `define` starts undefined again on each call.
(define (d k) (if (= k 0) 'done (begin (define x k) (d (- k 1)))))
(prn (d 3))
;; More than three parameters, some unchanged.
(prn (let loop ((a 0) (b 1) (c 2) (d 3)) (if (> a 5) (list a b c d) (loop (+ a 1) b (+ c 1) d))))
;; The loop's own name stays bound across the calls.
(prn (let loop ((i 0)) (if (< i 3) (loop (+ i 1)) (procedure? loop))))
;; Parameters swapped: every argument is read before any is stored.
(prn (let loop ((a 1) (b 2) (k 3)) (if (= k 0) (list a b) (loop b a (- k 1)))))
;; Captured frames of a four-parameter loop, and a loop called again from a closure.
(define fs (let loop ((a 0) (b 10) (c 20) (d 30) (acc '()))
             (if (= a 3) acc
                 (loop (+ a 1) b (+ c 1) d (cons (fn () (list a b c d (procedure? loop))) acc)))))
(prn (map (fn (f) (f)) fs))
(define gs (let loop ((a 0) (b 5) (acc '()))
             (if (= a 2) acc
                 (loop (+ a 1) b (cons (fn () (if (= a 0) (loop 2 b '()) (list a b))) acc)))))
(prn (map (fn (g) (g)) gs))
;; A `do` loop of a million steps runs in one frame.
(prn (do ((i 0 (+ i 1))) ((= i 1000000) i)))
;; Ten parameters: more than the three stored in place, so a new frame each call.
(define (m a b c d e f g h i j) (if (> a 5) (list a b c d e f g h i j) (m (+ a 1) b c d e f g h (+ i 1) j)))
(prn (m 0 1 2 3 4 5 6 7 8 9))
(define hs (let loop ((a 0) (b 1) (c 2) (d 3) (e 4) (f 5) (g 6) (h 7) (i 8) (j 9) (acc '()))
             (if (> a 2) acc (loop (+ a 1) b c d e f g h (+ i 1) j (cons (fn () (list a i j)) acc)))))
(prn (map (fn (h) (h)) hs))
;; A parameter passed on unchanged is still read after the arguments before it and
;; before those after it: a later argument that assigns it is seen only by later reads.
(prn (let loop ((a 1) (b 0)) (if (> b 2) (list a b) (loop a (begin (set! a (+ a 10)) (+ b 1))))))
(define (f a b) (if (> b 2) (list a b) (f a (begin (set! a (+ a 10)) (+ b 1)))))
(prn (f 1 0))
(define keep '())
(define (g a b) (if (> b 2) (list a b) (g a (begin (set! keep (cons (fn () a) keep)) (set! a (+ a 10)) (+ b 1)))))
(prn (g 1 0))
(prn (map (fn (k) (k)) keep))
;; A loop's own name, assigned or defined anew in its body, names the loop again on the
;; next pass.
(prn (let loop ((i 0)) (if (< i 3) (loop (begin (set! loop (fn (x) (list 'other x))) (+ i 1))) i)))
(prn (let loop ((i 0) (me #f)) (if (= i 0) (loop 1 loop) (if (< i 3) (begin (set! loop 42) (me (+ i 1) me)) (list i loop)))))
(define (start me) (me 1 me))
(prn (let loop ((i 0) (me #f)) (if (= i 0) (start loop) (if (< i 3) (begin (define loop 42) (me (+ i 1) me)) (list i (try loop (catch e 'undef)))))))
(prn (do ((a 1) (b 0 (begin (set! a (+ a 10)) (+ b 1)))) ((> b 2) (list a b))))
(define (f a b) (define (bump!) (set! a (+ a 10))) (if (> b 2) (list a b) (f a (begin (bump!) (+ b 1)))))
(prn (f 1 0))
(prn (let loop ((a 1) (b 2) (k 0)) (if (= k 2) (list a b) (loop a b (begin (set! a 'x) (set! b 'y) (+ k 1))))))

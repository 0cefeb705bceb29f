;; stdout: (101 102 103)
;; stdout: 6 (10 (11 12)) 12 (20 (21 22))
;; stdout: 5
;; stdout: "car: expected a list, got an integer 5"
;; stdout: (1 2)
;; stdout: 2666866670000
;; `let` frames come from the pool of finished frames and go back to it when the `let`
;; ends: a frame a procedure captured is not reused, a reused frame starts with its own
;; values, and an error in an init leaves nothing behind.
; closures made in a loop, each over its own `let` frame
(define (adders i acc)
  (if (= i 0) acc (adders (- i 1) (cons (let ((k i)) (fn (x) (+ x k))) acc))))
(prn (map (fn (f) (f 100)) (adders 3 '())))
; a frame given back and taken again by a `let` of another shape
(define (sum3 i) (let ((a i) (b (* i 2)) (c (* i 3))) (+ a b c)))
(define (pair i) (let ((p i)) (list p (let* ((q (+ p 1)) (r (+ q 1))) (list q r)))))
(prn (sum3 1) (pair 10) (sum3 2) (pair 20))
; a `let*` whose later init captures the frame
(define get-y (let* ((y 5) (g (fn () y))) g))
(prn (let ((y 99) (z 1)) (get-y)))
; a failing init: the `let` frame it was filling is let go, later lets are sound
(prn (try (let ((a 1) (b (car 5))) (+ a b)) (catch e e.message)))
(prn (let ((a 1) (b 2)) (list a b)))
; a helper defined in a `let` body inside a loop: constant memory, right answers
(define (loop i total)
  (if (= i 0) total
      (loop (- i 1) (+ total (let ((n i)) (define (sq) (* n n)) (sq))))))
(prn (loop 20000 0))

;;; The tasklisp prelude: procedures and macros the language expresses best itself.
;;; Loaded into the global environment when an interpreter starts.

(define (second xs) (first (rest xs)))
(define (third xs) (first (rest (rest xs))))
(define (cadr xs) (car (cdr xs)))
(define (cddr xs) (cdr (cdr xs)))
(define (caar xs) (car (car xs)))
(define (caddr xs) (car (cdr (cdr xs))))

(define (inc n) (+ n 1))
(define (dec n) (- n 1))

;; (compose f g) is (fn (x …) (f (g x …))), for any number of procedures. Built in one
;; pass from the right: composing a million procedures takes a million steps.
(define (compose . fs)
  (if (null? fs)
      identity
      (let ((backwards (reverse fs)))
        (reduce (fn (g f) (fn args (f (apply g args)))) (car backwards) (cdr backwards)))))

;; (partial f a) is (fn (b …) (f a b …)).
(define (partial f . bound)
  (fn args (apply f (append bound args))))

(define (complement pred) (fn args (not (apply pred args))))

;; (update m "k" f) sets "k" to (f old-value).
(define (update m k f) (assoc m k (f (get m k))))

;; (assoc-in m ["a" "b"] v) sets a nested key, creating maps on the way.
(define (assoc-in m ks v)
  (if (null? (cdr ks))
      (assoc m (car ks) v)
      (assoc m (car ks) (assoc-in (get m (car ks) {}) (cdr ks) v))))

;; (assert test "message") raises an EVAL_ERROR with the message when test is false.
;; It expands to `if`, which no program can redefine (a program may redefine `unless`).
(defmacro assert (test . message)
  `(if ,test
       nil
       (error ,(if (null? message) (str "assertion failed: " (repr test)) (car message)))))

;; (-> x (f a) g) threads x as the first argument: (g (f x a)).
(defmacro -> (x . forms)
  (reduce (fn (acc form)
            (if (list? form) `(,(car form) ,acc ,@(cdr form)) (list form acc)))
          x forms))

;; (->> x (f a) g) threads x as the last argument: (g (f a x)).
(defmacro ->> (x . forms)
  (reduce (fn (acc form)
            (if (list? form) `(,@form ,acc) (list form acc)))
          x forms))

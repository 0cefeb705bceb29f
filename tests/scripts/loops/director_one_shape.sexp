;; stdout: ("feedback" "input" "iteration" "previous")
;; stdout: ("a poem" nil nil 1)
;; stdout: ("a poem" "shorter" "draft 1" 2)
;; stdout: (1 2) "a poem / shorter / a poem / null / null" "COMPLETE"
;; stdout: "[a poem|]" "CONTINUATION" 2
; the director gets the same shape on every iteration, feedback and previous nil at first
(define seen [])
(define (write state iteration)
  (set! seen (append seen [state]))
  (str "draft " iteration))
(director-evaluator-loop :director write
                         :evaluator (fn (r i) {"success" (= i 2) "feedback" "shorter"})
                         :input "a poem")
(prn (sort (keys (first seen))))
(prn (map (fn (k) (get (first seen) k)) ["input" "feedback" "previous" "iteration"]))
(prn (map (fn (k) (get (nth seen 1) k)) ["input" "feedback" "previous" "iteration"]))
; a task director whose parameters name the fields gets them by name: one template serves
(set-provider! (fn (req) req.prompt))
(deftask compose (input feedback previous)
  :prompt "{{input}} / {{feedback}} / {{previous}}")
(define r (director-evaluator-loop :director compose
                                   :evaluator (fn (r i) {"success" (= i 2) "feedback" "shorter"})
                                   :input "a poem"))
(prn (map (fn (e) e.iteration) r.notes.evaluations) r.content r.status)
; a task of one parameter named otherwise gets the whole state
(deftask draft (state) :prompt "[{{state.input}}|{{state.feedback}}]")
(define d (director-evaluator-loop :director draft :evaluator (fn (r i) {"success" false})
                                   :max-iterations 2 :input "a poem"))
(prn d.content d.status d.notes.iterations)

;; stdout: ("inner1" "inner2" "inner3")
;; stdout: "outer"
;; with-provider inside concurrent pmap items stays inside each item, even when the
;; items interleave (each waits on a script while another runs).
(set-provider! (fn (req) "outer"))
(deftask ask () :prompt "q")
(deftask nap () :command ["sleep" "0.05"])
(prn (pmap (fn (x)
             (with-provider (fn (req) (str "inner" x))
               (nap)
               (get (ask) "content")))
           [1 2 3]
           :concurrency 3))
(prn (get (ask) "content"))

;; stdout: "b" "y" 2
;; stdout: {"name" "a" "tags" ("x" "y")}
(define data {"items" [{"name" "a" "tags" ["x" "y"]} {"name" "b"}] "count" 2})
(prn data.items[1].name data.items[0].tags[1] data.count)
(prn data.items[0])

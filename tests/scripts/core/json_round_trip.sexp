;; stdout: true
;; stdout: ("z" "a")
;; stdout: "{\"name\":\"Ada\",\"tags\":[\"x\",\"é\",\"🎉\"],\"n\":-3,\"f\":0.1,\"big\":9007199254740993,\"none\":null,\"empty\":[],\"obj\":{\"k\":{\"z\":1,\"a\":2}}}"
(define data {"name" "Ada" "tags" ["x" "é" "🎉"] "n" -3 "f" 0.1 "big" 9007199254740993 "none" nil "empty" [] "obj" {"k" {"z" 1 "a" 2}}})
(define back (json-parse (json-stringify data)))
(prn (equal? data back))
(prn (keys back.obj.k))
(prn (json-stringify back))

;; stdout: "{\"b\":1,\"a\":[1,2.5,null,true,\"x\"],\"m\":{}}"
;; stdout: "\"q\\\"uote\\n\"" "\"kw\"" "\"sym\"" "1.0"
(prn (json-stringify {"b" 1 "a" [1 2.5 nil true "x"] "m" {}}))
(prn (json-stringify "q\"uote\n") (json-stringify :kw) (json-stringify 'sym) (json-stringify 1.0))

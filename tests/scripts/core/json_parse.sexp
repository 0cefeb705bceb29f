;; stdout: {"a" (1 2.5 nil true false "s") "b" {}}
;; stdout: () nil "é" 7
(prn (json-parse "{\"a\": [1, 2.5, null, true, false, \"s\"], \"b\": {}}"))
(prn (json-parse "[]") (json-parse "null") (json-parse "\"\\u00e9\"") (json-parse " 7 "))

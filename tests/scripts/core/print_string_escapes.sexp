;; stdout: "quote\" backslash\\ newline\n tab\t return\r"
;; stdout: "bell\u{7}nul\u{0}"
;; stdout: "é☃🎉"
(prn "quote\" backslash\\ newline\n tab\t return\r")
(prn (str "bell" (read "\"\\u{7}\"") "nul" "\u{0}"))
(prn "é☃🎉")

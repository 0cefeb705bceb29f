;; stdout: "HELLO WÖRLD" "héllo" "STRASSE"
(prn (string-upcase "hello Wörld") (string-downcase "HÉLLO") (string-upcase "straße"))

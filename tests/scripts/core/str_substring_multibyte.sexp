;; stdout: "él" "🎉" "wörld" "" ""
(define s "héllo🎉wörld")
(prn (substring s 1 3) (substring s 5 6) (substring s 6) (substring s 0 0) (substring s 11))

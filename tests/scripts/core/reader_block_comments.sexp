;; stdout: 1 2
#| a block
   #| nested |# still comment (prn 0)
|#
(prn 1 #| inline |# 2)

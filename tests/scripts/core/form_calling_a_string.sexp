;; error: EVAL_ERROR not a procedure: "text" (a string)

("text")

;; error: EVAL_ERROR unbound symbol: step_results

(prn step_results[0].parsedContent)

;; error: EVAL_ERROR json-stringify: unknown option :ugly

(json-stringify {"a" 1} :ugly true)

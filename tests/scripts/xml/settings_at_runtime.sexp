;; stdout: "tiny-1|Be brief.|hello"
;; stdout: "Shows what reaches the provider"
;; stdout: "secret=42"
;; stdout: "input_validation_failure"
;; stdout: "secret=42"
;; stdout: (1 2)
;; stdout: "output_format_failure"
(set-provider! (fn (req) (if (= req.task "configured") (str req.model "|" req.system "|" req.prompt) req.prompt)))
(import "templates/settings.xml")
(prn (get (configured) "content"))
(prn configured.description)
(let ((secret 42))
  (prn (get (sees_all) "content"))
  (prn (get (try (sees_none) (catch e e)) "reason"))
  (prn (get (sees_some) "content")))
(prn (get (wants_array) "parsedContent"))
(prn (get (try (wants_object) (catch e e)) "reason"))

;; MCP tools in a tool loop: the reference MCP server's tools offered to a model.
;;
;; Runs offline: the "model" is a provider written in the language, which asks for the
;; server's `get-sum` tool and then answers from what the tool returned. Swap in a real
;; one with `--provider openai` (and drop the set-provider! line).
;;
;;   TASKLISP_MCP_EVERYTHING=.../server-everything/dist/index.js tasklisp run examples/mcp.sexp
;;
;; Without that variable the server is started with npx, which downloads
;; @modelcontextprotocol/server-everything once.

(define server
  (let ((installed (getenv "TASKLISP_MCP_EVERYTHING")))
    (if installed
        ["node" installed]
        ["npx" "-y" "@modelcontextprotocol/server-everything"])))

(define everything (mcp-connect "everything" :command server))

;; Two of its tools, as tasks named everything/get-sum and everything/echo.
(define tools
  (filter (fn (t) (contains? ["everything/get-sum" "everything/echo"] t.name))
          (mcp-tools everything)))

(define (model request)
  (let ((last-message (last request.messages)))
    (if (= (get last-message "role") "tool")
        (str "The tool says: " (get last-message "content"))
        {"tool_calls" [{"id" "sum1" "name" "everything/get-sum" "arguments" {"a" 19 "b" 23}}]})))
(set-provider! model)

(deftask add-up (question) :prompt "{{question}}" :tools tools)

(define answer (add-up "What is 19 + 23?"))
(println answer.content)
(println (map (fn (call) (get call "name")) answer.notes.toolCalls))
(mcp-close everything)

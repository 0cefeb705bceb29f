; The TaskLibrary the MCP tests serve.
(deftask add (a b) :description "Add two integers" :param-types {"a" "integer" "b" "integer"} (+ a b))
(deftask boom (why) :description "Always fails" (fail :tool_execution_error why))

//! An MCP server's tools as tasks: `NAME/tool`, with the server's description and input
//! schema, one parameter per property of that schema (the required ones without a
//! default). Calling one calls the tool; its answer is a TaskResult, its `isError` a
//! `TASK_FAILURE` `tool_execution_error`.

use super::client::{failure_of, Client, Interrupted};
use super::protocol::joined_text;
use crate::error::Error;
use crate::error::{Reason, Result};
use crate::eval::ast::Extension;
use crate::eval::env::{lookup_by_name, Env, Scope};
use crate::eval::fiber::run_blocking;
use crate::eval::{Interp, Node};
use crate::provider::http::excerpt;
use crate::symbol::Sym;
use crate::task::result::task_result;
use crate::task::{lossy_json, Action, InheritContext, Param, Task, TaskKind};
use crate::value::{from_json, Entries, Value};
use serde_json::{Map, Value as Json};
use std::collections::HashMap;
use std::rc::Rc;
use std::sync::atomic::Ordering;
use std::sync::Arc;

/// The server's tools as task values.
pub fn tool_tasks(client: &Arc<Client>, interrupted: Interrupted) -> Result<Vec<Value>> {
    let tools = client.list("tools/list", "tools", interrupted)?;
    tools
        .iter()
        .map(|tool| Ok(Value::Task(Rc::new(tool_task(client, tool)?))))
        .collect()
}

/// Calls `tool` with `arguments` (a JSON object) and reads its answer. Inside a `pmap`
/// item the wait runs on a worker thread, so the other items go on meanwhile.
pub fn call_tool(
    interp: &Interp,
    client: &Arc<Client>,
    tool: &str,
    arguments: Json,
) -> Result<Value> {
    let params = serde_json::json!({"name": tool, "arguments": arguments});
    let step = serde_json::json!({"server": client.name, "params": params});
    // What the program printed shows before a wait that may be long.
    interp.flush();
    let answer = crate::task::journal::journaled(interp, "mcp", &step, || {
        let (waiter, flag) = (client.clone(), interp.interrupt_flag());
        run_blocking(interp, move || {
            let interrupted = || match flag.load(Ordering::Relaxed) {
                true => Err(Error::task_failure(Reason::ExecutionHalted, "interrupted")),
                false => Ok(()),
            };
            waiter.request("tools/call", params, &interrupted)
        })
    })?;
    tool_result(&client.name, tool, &answer)
}

/// A tool's answer as a TaskResult: `content` its text parts joined, `parsedContent` its
/// structured content. Other parts (images, resources) are kept in `notes.mcpContent`.
fn tool_result(server: &str, tool: &str, answer: &Json) -> Result<Value> {
    let content = answer.get("content").unwrap_or(&Json::Null);
    let text = joined_text(content);
    if answer.get("isError").and_then(Json::as_bool) == Some(true) {
        let failed = failure_of(
            server,
            Reason::ToolExecutionError,
            format!("tool `{tool}` failed: {}", excerpt(&text, 2000)),
        );
        return Err(failed.with_detail("tool", Json::from(tool)));
    }
    let parsed = answer
        .get("structuredContent")
        .map_or(Value::Nil, from_json);
    let mut notes = Entries::new();
    notes.insert(Rc::from("server"), Value::from(server));
    let only_text = content.as_array().is_some_and(|parts| {
        parts
            .iter()
            .all(|p| p.get("type").and_then(Json::as_str) == Some("text"))
    });
    if !only_text {
        notes.insert(Rc::from("mcpContent"), from_json(content));
    }
    Ok(task_result(
        &format!("{server}/{tool}"),
        text,
        parsed,
        notes,
    ))
}

/// The task of one tool listed by `tools/list`.
fn tool_task(client: &Arc<Client>, tool: &Json) -> Result<Task> {
    let Some(name) = tool.get("name").and_then(Json::as_str) else {
        return Err(client.failure(format!(
            "listed a tool without a name: {}",
            excerpt(&tool.to_string(), 200)
        )));
    };
    let schema = match tool.get("inputSchema") {
        Some(Json::Object(schema)) => schema.clone(),
        _ => Map::from_iter([("type".to_owned(), Json::from("object"))]),
    };
    let (params, param_types) = parameters(&schema);
    let names: Vec<Sym> = params.iter().map(|p| p.name).collect();
    let call = CallTool {
        client: client.clone(),
        tool: name.to_owned(),
        params: names.clone(),
    };
    let mut metadata = Entries::new();
    metadata.insert(Rc::from("mcp_server"), Value::from(client.name.as_str()));
    metadata.insert(Rc::from("mcp_tool"), Value::from(name));
    Ok(Task {
        name: format!("{}/{name}", client.name),
        kind: TaskKind::Composite,
        subtype: std::cell::OnceCell::new(),
        description: tool
            .get("description")
            .and_then(Json::as_str)
            .map(str::to_owned),
        params,
        scope: Scope::new(names),
        issues_slot: None,
        json_output: false,
        strict_json: false,
        schema: None,
        model: None,
        options: crate::provider::ModelOptions::default(),
        tools: Vec::new(),
        constraints: Default::default(),
        param_types,
        input_schema: Some(Rc::new(Json::Object(schema))),
        context: InheritContext::None,
        max_turns: None,
        cache: false,
        approve: false,
        retries: 0,
        audits: Vec::new(),
        extra_metadata: metadata,
        origin: None,
        span: None,
        action: Action::Body(Rc::new(Node::Extension(Box::new(call))), None),
        home: None,
        lexical: None,
    })
}

/// One parameter per property of the input schema, in the server's order; those not
/// `required` default to nil (and are then not sent). Their JSON types, for `describe`.
fn parameters(schema: &Map<String, Json>) -> (Vec<Param>, HashMap<String, String>) {
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Json::as_array)
        .map(|names| names.iter().filter_map(Json::as_str).collect())
        .unwrap_or_default();
    let properties = schema.get("properties").and_then(Json::as_object);
    let mut params = Vec::new();
    let mut types = HashMap::new();
    for (name, property) in properties.into_iter().flatten() {
        params.push(Param {
            name: Sym::new(name),
            default: (!required.contains(&name.as_str())).then_some(Value::Nil),
        });
        if let Some(kind) = property.get("type").and_then(Json::as_str) {
            types.insert(name.clone(), kind.to_owned());
        }
    }
    (params, types)
}

/// The body of a tool's task: its parameters as the arguments of `tools/call`.
struct CallTool {
    client: Arc<Client>,
    tool: String,
    params: Vec<Sym>,
}

impl Extension for CallTool {
    fn eval(&self, interp: &Interp, env: &Env) -> Result<Value> {
        let mut arguments = Map::new();
        for name in &self.params {
            match lookup_by_name(env, *name) {
                None | Some(Value::Nil) => {}
                Some(value) => {
                    arguments.insert(name.name().to_owned(), lossy_json(&value));
                }
            }
        }
        interp
            .tasks
            .observer
            .mark_external_call(&interp.state.task.observe);
        call_tool(interp, &self.client, &self.tool, Json::Object(arguments))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn required_properties_have_no_default() {
        let schema = json!({
            "type": "object",
            "properties": {"a": {"type": "number"}, "b": {}},
            "required": ["a"]
        });
        let Json::Object(schema) = schema else {
            unreachable!()
        };
        let (params, types) = parameters(&schema);
        let shown: Vec<(&str, bool)> = params
            .iter()
            .map(|p| (p.name.name(), p.default.is_some()))
            .collect();
        assert_eq!(shown, [("a", false), ("b", true)]);
        assert_eq!(types.get("a").map(String::as_str), Some("number"));
    }

    #[test]
    fn an_error_result_is_a_tool_execution_error_naming_the_server() {
        let answer =
            json!({"content": [{"type": "text", "text": "no such file"}], "isError": true});
        let error = tool_result("fs", "read", &answer).unwrap_err();
        assert_eq!(error.reason(), Some("tool_execution_error"));
        assert!(
            error.message().contains("MCP server `fs`"),
            "{}",
            error.message()
        );
        assert!(error.message().contains("no such file"));
    }

    #[test]
    fn structured_content_is_the_parsed_content() {
        let answer = json!({
            "content": [{"type": "text", "text": "{\"t\":1}"}],
            "structuredContent": {"t": 1}
        });
        let result = tool_result("w", "get", &answer).unwrap();
        let parsed = crate::task::result::field(&result, "parsedContent");
        assert_eq!(lossy_json(&parsed), json!({"t": 1}));
    }
}

//! Tools: an atomic task with `:tools [t…]` offers those tasks to the model. When the
//! model asks for one, its arguments are checked against the tool's JSON Schema, the task
//! is called, and its result (or its failure) goes back to the model, which is asked
//! again — until it answers without a tool call or the task's turns run out.

use super::audit::Checks;
use super::call::call_approved;
use super::definition::{lossy_json, Task};
use super::result::{field, is_task_result};
use super::session::{send, Sent};
use crate::error::{Error, Result};
use crate::eval::env::Env;
use crate::eval::Interp;
use crate::provider::http::excerpt;
use crate::provider::message::wire_tool_name;
use crate::provider::{Message, Request, ToolCall, ToolSpec};
use crate::value::{from_json, Entries, Value};
use serde_json::{json, Map, Value as Json};
use std::rc::Rc;
use std::time::Instant;

/// Model turns a tool loop may take when the task sets no `:max-turns`.
pub const DEFAULT_MAX_TURNS: u64 = 8;

/// Tool calls one answer may ask for: an answer asking for more runs none of them.
pub const MAX_TOOL_CALLS_PER_TURN: usize = 128;

/// The JSON types a parameter can be declared with in `:param-types`.
pub const PARAM_TYPES: [&str; 6] = ["string", "integer", "number", "boolean", "array", "object"];

/// The JSON Schema of a task's parameters as offered to a model: strings unless
/// `:param-types` says otherwise (a model is best told what to send).
pub fn parameters_schema(task: &Task) -> Json {
    parameters_schema_with(task, &json!({"type": "string"}))
}

/// The JSON Schema of a task's parameters as an MCP client sees them: a parameter without
/// `:param-types` takes any JSON value, as it does when the task is called in the language.
pub fn open_parameters_schema(task: &Task) -> Json {
    parameters_schema_with(task, &json!({}))
}

/// `untyped` is the schema of a parameter `:param-types` does not name; a parameter
/// without a default is required. A task given its schema whole has that.
fn parameters_schema_with(task: &Task, untyped: &Json) -> Json {
    if let Some(schema) = &task.input_schema {
        return Json::clone(schema);
    }
    let properties: Map<String, Json> = task
        .params
        .iter()
        .map(|param| {
            let name = param.name.name();
            let schema = match task.param_types.get(name) {
                Some(kind) => json!({"type": kind}),
                None => untyped.clone(),
            };
            (name.to_owned(), schema)
        })
        .collect();
    let required: Vec<&str> = task
        .params
        .iter()
        .filter(|param| param.default.is_none())
        .map(|param| param.name.name())
        .collect();
    json!({
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": false,
    })
}

/// How a task is offered to the model: under its wire name (`wire_tool_name`).
pub fn tool_spec(task: &Task) -> ToolSpec {
    ToolSpec {
        name: wire_tool_name(&task.name),
        description: task.description.clone().unwrap_or_default(),
        parameters: parameters_schema(task),
    }
}

/// Sends `request` with `tools` offered and answers the model's tool calls until it
/// gives its answer. Returns that answer (its cost the sum of every turn's) and
/// `notes.toolCalls`.
pub fn converse(
    interp: &Interp,
    task: &Task,
    request: &mut Request,
    frame: &Env,
    deadline: Option<Instant>,
) -> Result<(Sent, Value)> {
    request.tools = offered(task)?;
    request.tool_choice = task
        .constraints
        .tool_choice
        .as_deref()
        .map(|choice| match choice {
            "auto" | "required" | "none" => choice.to_owned(),
            name => wire_tool_name(name),
        });
    let limit = task.max_turns.unwrap_or(DEFAULT_MAX_TURNS);
    let mut log: Vec<Value> = Vec::new();
    let mut turn = 0;
    let mut cost: Option<f64> = None;
    loop {
        turn += 1;
        if turn > limit {
            return Err(Error::resource(
                "turns",
                turn,
                limit,
                format!(
                    "task `{}` still asked for tools after {limit} turns (:max-turns)",
                    task.name
                ),
            )
            .with_detail("toolCalls", lossy_json(&Value::list(log))));
        }
        let mut sent = send(interp, request, frame, deadline, task.cache)?;
        if let Some(spent) = sent.notes.cost {
            cost = Some(cost.unwrap_or(0.0) + spent);
        }
        let response = sent.response;
        if response.tool_calls.is_empty() {
            sent.response = response;
            sent.notes.cost = cost;
            return Ok((sent, Value::list(log)));
        }
        check_call_count(task, response.tool_calls.len(), &log)?;
        // A tool forced once has been called: the model may now answer.
        if request.tool_choice.as_deref().is_some_and(|c| c != "none") {
            request.tool_choice = Some("auto".to_owned());
        }
        let calls = with_ids(response.tool_calls, request.messages.len());
        request
            .messages
            .push(Message::tool_request(response.content, calls.clone()));
        for call in &calls {
            let (sent, entry) = match run_tool(interp, &task.tools, call, frame)? {
                Ok(result) => (text_of(&result), ("result", result)),
                Err(message) => (format!("Error: {message}"), ("error", Value::from(message))),
            };
            request.messages.push(Message::tool_result(&call.id, sent));
            let mut logged = Entries::new();
            let name = task_name_of(&task.tools, &call.name).unwrap_or(&call.name);
            logged.insert(Rc::from("name"), Value::from(name));
            logged.insert(Rc::from("arguments"), from_json(&call.arguments));
            logged.insert(Rc::from(entry.0), entry.1);
            log.push(Value::map(logged));
        }
    }
}

/// The task's tools as offered; two whose wire names coincide (a task named as another's
/// derived name) are refused rather than confused.
fn offered(task: &Task) -> Result<Vec<ToolSpec>> {
    let specs: Vec<(&str, ToolSpec)> = task
        .tools
        .iter()
        .map(|t| (t.name.as_str(), tool_spec(t)))
        .collect();
    for (i, (name, spec)) in specs.iter().enumerate() {
        if let Some((first, _)) = specs.iter().take(i).find(|(_, s)| s.name == spec.name) {
            return Err(Error::validation(format!(
                "tools `{first}` and `{name}` of task `{}` would both be sent as `{}`",
                task.name, spec.name
            )));
        }
    }
    Ok(specs.into_iter().map(|(_, spec)| spec).collect())
}

/// The tool a call names: by its wire name, or by the task's own name (a procedure
/// provider may use either).
fn find_tool<'a>(tools: &'a [Rc<Task>], called: &str) -> Option<&'a Rc<Task>> {
    tools
        .iter()
        .find(|t| wire_tool_name(&t.name) == called)
        .or_else(|| tools.iter().find(|t| t.name == called))
}

/// The task name behind a called tool name, for `notes.toolCalls`.
fn task_name_of<'a>(tools: &'a [Rc<Task>], called: &str) -> Option<&'a str> {
    find_tool(tools, called).map(|t| t.name.as_str())
}

/// Refuses an answer asking for more than `MAX_TOOL_CALLS_PER_TURN` tool calls.
fn check_call_count(task: &Task, asked: usize, log: &[Value]) -> Result<()> {
    if asked <= MAX_TOOL_CALLS_PER_TURN {
        return Ok(());
    }
    Err(Error::resource(
        "tool_calls",
        asked as u64,
        MAX_TOOL_CALLS_PER_TURN as u64,
        format!(
            "the model asked for {asked} tool calls in one turn of task `{}`; at most \
             {MAX_TOOL_CALLS_PER_TURN} are run per turn",
            task.name
        ),
    )
    .with_detail("toolCalls", lossy_json(&Value::list(log.to_vec()))))
}

/// Calls without an id (a procedure provider need not give one) are numbered, unique
/// within the conversation: `call_<message>_<n>`.
fn with_ids(calls: Vec<ToolCall>, message: usize) -> Vec<ToolCall> {
    calls
        .into_iter()
        .enumerate()
        .map(|(n, call)| ToolCall {
            id: if call.id.is_empty() {
                format!("call_{message}_{}", n + 1)
            } else {
                call.id
            },
            ..call
        })
        .collect()
}

/// Runs one tool call. The inner error is the message the model is sent back; only
/// an interruption or `exit` ends the loop.
fn run_tool(
    interp: &Interp,
    tools: &[Rc<Task>],
    tool_call: &ToolCall,
    env: &Env,
) -> Result<std::result::Result<Value, String>> {
    let Some(tool) = find_tool(tools, &tool_call.name) else {
        let names: Vec<String> = tools.iter().map(|t| wire_tool_name(&t.name)).collect();
        return Ok(Err(format!(
            "unknown tool `{}` (the tools are: {})",
            excerpt(&tool_call.name, 100),
            names.join(", ")
        )));
    };
    if let Err(message) = check_arguments(&parameters_schema(tool), &tool_call.arguments) {
        return Ok(Err(message));
    }
    let mut args = Vec::new();
    if let Json::Object(arguments) = &tool_call.arguments {
        for (name, value) in arguments {
            args.push(Value::data_keyword(name));
            args.push(from_json(value));
        }
    }
    if !super::human::approved(interp, tool, &tool_call.arguments)? {
        return Ok(Err(format!(
            "the user did not allow this call of `{}`",
            tool.name
        )));
    }
    match call_approved(interp, tool, &args, env, &Checks::default()) {
        Ok(result) => Ok(Ok(sent_back(result))),
        Err(e) if e.exit_code().is_some() => Err(e),
        Err(e) => {
            interp.check_interrupt()?;
            Ok(Err(e.message().to_owned()))
        }
    }
}

/// What `check_arguments` says is cut to this many bytes: it goes back to the model.
pub const MAX_ARGUMENT_ERROR_BYTES: usize = 1024;

/// Arguments must be a JSON object that matches the tool's parameter schema. The error
/// is the message sent back to the model, at most `MAX_ARGUMENT_ERROR_BYTES` long.
pub fn check_arguments(schema: &Json, arguments: &Json) -> std::result::Result<(), String> {
    match arguments {
        Json::Object(_) => {}
        Json::String(raw) => {
            return Err(format!(
                "the arguments are not a JSON object: {}",
                excerpt(raw, 200)
            ))
        }
        other => {
            return Err(format!(
                "the arguments must be a JSON object, not {}",
                excerpt(&other.to_string(), 200)
            ))
        }
    }
    let validator = jsonschema::validator_for(schema)
        .map_err(|e| format!("the tool's parameter schema is invalid: {e}"))?;
    let mut message = String::new();
    for error in validator.iter_errors(arguments) {
        if message.len() > MAX_ARGUMENT_ERROR_BYTES {
            break;
        }
        message.push_str(if message.is_empty() {
            "invalid arguments: "
        } else {
            "; "
        });
        let at = error.instance_path().as_str().to_owned();
        if !at.is_empty() {
            message.push_str(&excerpt(&at, 200));
            message.push_str(": ");
        }
        message.push_str(&excerpt(&error.to_string(), MAX_ARGUMENT_ERROR_BYTES));
    }
    if message.is_empty() {
        Ok(())
    } else {
        Err(excerpt(&message, MAX_ARGUMENT_ERROR_BYTES))
    }
}

/// What goes back to the model, as data: the result's `parsedContent` when it has one,
/// else its `content`.
fn sent_back(result: Value) -> Value {
    if !is_task_result(&result) {
        return result;
    }
    match field(&result, "parsedContent") {
        Value::Nil => field(&result, "content"),
        parsed => parsed,
    }
}

/// The tool message's text: a string as it is, other data as compact JSON.
fn text_of(value: &Value) -> String {
    match value {
        Value::Str(s) => s.to_string(),
        other => lossy_json(other).to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calls_without_ids_are_numbered() {
        let call = |id: &str| ToolCall {
            id: id.into(),
            name: "f".into(),
            arguments: json!({}),
        };
        let ids: Vec<String> = with_ids(vec![call(""), call("given"), call("")], 3)
            .into_iter()
            .map(|c| c.id)
            .collect();
        assert_eq!(ids, ["call_3_1", "given", "call_3_3"]);
    }
}

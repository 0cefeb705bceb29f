//! `tasklisp mcp`: the TaskLibrary served to MCP clients. Every task is a tool (its name,
//! description and the JSON Schema of its parameters, as the tool loop offers it to a
//! model); a call runs the task with the configured provider. Requests are answered one
//! at a time, in the order they come, on the interpreter's thread.

use super::protocol::{self, classify, Message, HANDSHAKE_VERSIONS, STATELESS_VERSION};
use super::transport::{read_line, Line};
use crate::error::{Error, Reason, Result};
use crate::eval::Interp;
use crate::task::result::field;
use crate::task::tools::{check_arguments, open_parameters_schema};
use crate::task::{lossy_json, Task};
use crate::value::{from_json, Value};
use serde_json::{json, Value as Json};
use std::fs::File;
use std::io::Write;
use std::os::fd::{AsRawFd, FromRawFd};
use std::path::PathBuf;
use std::rc::Rc;

/// The largest error map put in a failed call's structured content.
const MAX_ERROR_JSON: usize = 64 * 1024;

/// Imports `files`, then serves their tasks over stdio, or over streamable HTTP on
/// 127.0.0.1:`port` (0: a free port, printed on stderr).
pub fn serve(interp: &Interp, files: &[PathBuf], http: Option<u16>) -> Result<i32> {
    let Some(port) = http else {
        // The protocol's input is taken first, so no code (of the files either) reads it.
        let input = take_stdin().map_err(|e| Error::eval(format!("mcp: stdin: {e}")))?;
        import_all(interp, files)?;
        return serve_stdio(interp, input);
    };
    import_all(interp, files)?;
    super::serve_http::serve(interp, port)
}

fn import_all(interp: &Interp, files: &[PathBuf]) -> Result<()> {
    for file in files {
        crate::module::import_file(interp, file, None)?;
    }
    Ok(())
}

/// The protocol's input, moved off descriptor 0, which then reads `/dev/null`: served
/// code (`read-line`, a question, a program a task starts) finds its input at its end
/// instead of reading (and losing) the client's messages.
fn take_stdin() -> std::io::Result<File> {
    let null = File::open("/dev/null")?;
    // SAFETY: dup of descriptor 0, which stays open; the copy is ours alone.
    let protocol = unsafe { libc::dup(0) };
    if protocol < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: the copy is a fresh descriptor nobody else owns.
    let protocol = unsafe { File::from_raw_fd(protocol) };
    // SAFETY: both descriptors are open; dup2 replaces descriptor 0 atomically.
    if unsafe { libc::dup2(null.as_raw_fd(), 0) } < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(protocol)
}

/// One message per line on `input`, one answer per line on stdout, until `input` ends.
fn serve_stdio(interp: &Interp, input: File) -> Result<i32> {
    let mut stdin = std::io::BufReader::new(input);
    loop {
        let answer = match read_line(&mut stdin) {
            Ok(Line::Text(bytes)) if bytes.iter().all(u8::is_ascii_whitespace) => continue,
            Ok(Line::Text(bytes)) => answer_bytes(interp, &bytes),
            Ok(Line::TooLarge) => Some(too_large()),
            Ok(Line::End) => return Ok(0),
            Err(e) => return Err(Error::eval(format!("mcp: cannot read stdin: {e}"))),
        };
        if let Some(answer) = answer {
            let mut stdout = std::io::stdout().lock();
            writeln!(stdout, "{answer}")
                .and_then(|()| stdout.flush())
                .map_err(|e| Error::stdout_write(&e))?;
        }
    }
}

/// The answer to a message that was over the size limit.
pub fn too_large() -> Json {
    let message = format!(
        "the message is over the limit of {} MiB",
        protocol::MAX_MESSAGE_BYTES >> 20
    );
    protocol::error(&Json::Null, protocol::INVALID_REQUEST, &message)
}

/// The answer to one message's bytes; none for a notification or a response.
pub fn answer_bytes(interp: &Interp, bytes: &[u8]) -> Option<Json> {
    match serde_json::from_slice::<Json>(bytes) {
        Ok(message) => answer(interp, &message),
        Err(e) => Some(protocol::error(
            &Json::Null,
            protocol::PARSE_ERROR,
            &format!("not JSON: {e}"),
        )),
    }
}

fn answer(interp: &Interp, message: &Json) -> Option<Json> {
    match classify(message) {
        Message::Request { id, method, params } => Some(match respond(interp, method, params) {
            Ok(result) if method == "server/discover" || protocol::is_stateless(params) => {
                protocol::result(id, protocol::stateless_result(method, result))
            }
            Ok(result) => protocol::result(id, result),
            Err((code, text)) => protocol::error(id, code, &text),
        }),
        Message::Notification { .. } | Message::Response { .. } => None,
        Message::Invalid => Some(protocol::error(
            &Json::Null,
            protocol::INVALID_REQUEST,
            "not a JSON-RPC 2.0 message",
        )),
    }
}

type Answer = std::result::Result<Json, (i64, String)>;

fn respond(interp: &Interp, method: &str, params: &Json) -> Answer {
    match method {
        "initialize" => {
            let asked = params.get("protocolVersion").and_then(Json::as_str);
            Ok(json!({
                "protocolVersion": protocol::negotiate(asked),
                "capabilities": capabilities(),
                "serverInfo": protocol::implementation(),
            }))
        }
        "server/discover" => {
            let mut versions = vec![STATELESS_VERSION];
            versions.extend(HANDSHAKE_VERSIONS);
            Ok(json!({
                "supportedVersions": versions,
                "capabilities": capabilities(),
                "serverInfo": protocol::implementation(),
            }))
        }
        "ping" => Ok(json!({})),
        "tools/list" => Ok(json!({"tools": tools(interp)})),
        "tools/call" => call(interp, params),
        other => Err((
            protocol::METHOD_NOT_FOUND,
            format!("tasklisp does not serve {other}"),
        )),
    }
}

fn capabilities() -> Json {
    json!({"tools": {"listChanged": false}})
}

/// Every task of the library, as a tool.
fn tools(interp: &Interp) -> Vec<Json> {
    interp
        .tasks
        .by_type(None, None)
        .iter()
        .map(|task| {
            json!({
                "name": task.name,
                "description": task.description.clone().unwrap_or_default(),
                "inputSchema": open_parameters_schema(task),
            })
        })
        .collect()
}

/// Runs the task a `tools/call` names. Arguments that do not fit and failures of the
/// task are answered as `isError` results, for the model behind the client to read.
fn call(interp: &Interp, params: &Json) -> Answer {
    let Some(name) = params.get("name").and_then(Json::as_str) else {
        return Err((protocol::INVALID_PARAMS, "tools/call needs a `name`".into()));
    };
    let Some(task) = interp.tasks.get(name) else {
        return Err((protocol::INVALID_PARAMS, format!("unknown tool: {name}")));
    };
    let arguments = params.get("arguments").cloned().unwrap_or(json!({}));
    let ran = check_arguments(&open_parameters_schema(&task), &arguments)
        .map_err(|message| Error::task_failure(Reason::InputValidationFailure, message))
        .and_then(|()| run(interp, &task, &arguments));
    Ok(match ran {
        Ok(result) => succeeded(&result),
        Err(error) => {
            let cause = error.reason().unwrap_or(error.kind().code());
            let text = format!("{cause}: {}", error.message());
            failed(&text, error.to_bounded_json(MAX_ERROR_JSON))
        }
    })
}

fn run(interp: &Interp, task: &Rc<Task>, arguments: &Json) -> Result<Value> {
    let mut args = Vec::new();
    for (name, value) in arguments.as_object().into_iter().flatten() {
        args.push(Value::data_keyword(name));
        args.push(from_json(value));
    }
    crate::task::call(interp, task, &args, &None)
}

/// A result's `content` as text and its `parsedContent` as structured content (which
/// MCP wants an object: other data is sent as `{"result": data}`).
fn succeeded(result: &Value) -> Json {
    let text = match field(result, "content") {
        Value::Str(text) => text.to_string(),
        Value::Nil => String::new(),
        other => lossy_json(&other).to_string(),
    };
    let mut answer = json!({"content": [{"type": "text", "text": text}], "isError": false});
    let structured = match field(result, "parsedContent") {
        Value::Nil => None,
        map @ Value::Map(_) => Some(lossy_json(&map)),
        other => Some(json!({"result": lossy_json(&other)})),
    };
    if let (Some(structured), Some(object)) = (structured, answer.as_object_mut()) {
        object.insert("structuredContent".into(), structured);
    }
    answer
}

/// A failed call: the reason and message as text, the error's map (type, reason,
/// message, details) as structured content.
fn failed(message: &str, error: Json) -> Json {
    json!({
        "content": [{"type": "text", "text": message}],
        "structuredContent": error,
        "isError": true,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn interp_with(source: &str) -> Interp {
        let interp = Interp::new(crate::Limits::default()).expect("interpreter");
        interp.run_source("<test>", source).expect("the tasks load");
        interp
    }

    fn ask(interp: &Interp, message: Json) -> Json {
        answer(interp, &message).expect("an answer")
    }

    #[test]
    fn tasks_are_listed_with_their_parameters_schema() {
        let interp = interp_with(r#"(deftask add (a b) :description "Adds" (+ a b))"#);
        let listed = ask(&interp, protocol::request(1, "tools/list", json!({})));
        let tools = &listed["result"]["tools"];
        assert_eq!(tools[0]["name"], "add");
        assert_eq!(tools[0]["description"], "Adds");
        assert_eq!(tools[0]["inputSchema"]["required"], json!(["a", "b"]));
    }

    #[test]
    fn an_untyped_parameter_takes_any_json_value() {
        let interp = interp_with(r#"(deftask boom (x) {"got" x})"#);
        let listed = ask(&interp, protocol::request(1, "tools/list", json!({})));
        let properties = &listed["result"]["tools"][0]["inputSchema"]["properties"];
        assert_eq!(properties["x"], json!({}));
        let params = json!({"name": "boom", "arguments": {"x": 1}});
        let called = ask(&interp, protocol::request(2, "tools/call", params));
        assert_eq!(called["result"]["isError"], false, "{called}");
        assert_eq!(called["result"]["structuredContent"], json!({"got": 1}));
    }

    #[test]
    fn a_call_answers_content_and_structured_content() {
        let interp = interp_with(
            r#"(deftask pair (a) :param-types {"a" "integer"} {"a" a "twice" (* 2 a)})"#,
        );
        let params = json!({"name": "pair", "arguments": {"a": 4}});
        let called = ask(&interp, protocol::request(2, "tools/call", params));
        assert_eq!(called["result"]["isError"], false);
        assert_eq!(
            called["result"]["structuredContent"],
            json!({"a": 4, "twice": 8})
        );
        assert_eq!(
            called["result"]["content"][0]["text"],
            r#"{"a":4,"twice":8}"#
        );
    }

    #[test]
    fn a_failure_is_an_error_result_with_message_and_reason() {
        let interp = interp_with(r#"(deftask boom () (fail :tool_execution_error "it broke"))"#);
        let params = json!({"name": "boom", "arguments": {}});
        let called = ask(&interp, protocol::request(3, "tools/call", params));
        let result = &called["result"];
        assert_eq!(result["isError"], true);
        let text = result["content"][0]["text"].as_str().unwrap();
        assert_eq!(text, "tool_execution_error: it broke");
        assert_eq!(result["structuredContent"]["type"], "TASK_FAILURE");
        assert_eq!(
            result["structuredContent"]["reason"],
            "tool_execution_error"
        );
    }

    #[test]
    fn arguments_that_do_not_fit_are_an_error_result_with_message_and_reason() {
        let interp = interp_with(r#"(deftask add (a) :param-types {"a" "integer"} a)"#);
        let params = json!({"name": "add", "arguments": {"a": "one"}});
        let called = ask(&interp, protocol::request(3, "tools/call", params));
        let result = &called["result"];
        assert_eq!(result["isError"], true);
        let text = result["content"][0]["text"].as_str().unwrap();
        assert!(
            text.starts_with("input_validation_failure: invalid arguments: "),
            "{text}"
        );
        assert_eq!(result["structuredContent"]["type"], "TASK_FAILURE");
        assert_eq!(
            result["structuredContent"]["reason"],
            "input_validation_failure"
        );
        assert!(result["structuredContent"]["message"]
            .as_str()
            .unwrap()
            .starts_with("invalid arguments: "));
    }

    #[test]
    fn an_id_that_is_not_a_string_or_number_is_an_invalid_request() {
        let interp = interp_with("");
        for id in [json!({"a": 1}), json!([1]), Json::Null, json!(true)] {
            let asked = json!({"jsonrpc": "2.0", "id": id, "method": "ping"});
            let answered = ask(&interp, asked);
            assert_eq!(answered["error"]["code"], protocol::INVALID_REQUEST, "{id}");
            assert_eq!(answered["id"], Json::Null);
        }
    }

    #[test]
    fn unknown_tools_and_methods_are_protocol_errors() {
        let interp = interp_with("");
        let params = json!({"name": "nope", "arguments": {}});
        let called = ask(&interp, protocol::request(4, "tools/call", params));
        assert_eq!(called["error"]["code"], protocol::INVALID_PARAMS);
        let other = ask(
            &interp,
            protocol::request(5, "sampling/createMessage", json!({})),
        );
        assert_eq!(other["error"]["code"], protocol::METHOD_NOT_FOUND);
        assert!(answer(
            &interp,
            &protocol::notification("notifications/initialized", json!({}))
        )
        .is_none());
    }

    #[test]
    fn the_version_asked_for_is_answered_when_spoken() {
        let interp = interp_with("");
        for (asked, answered) in [("2025-06-18", "2025-06-18"), ("2024-11-05", "2025-11-25")] {
            let params = json!({"protocolVersion": asked, "capabilities": {}});
            let init = ask(&interp, protocol::request(1, "initialize", params));
            assert_eq!(init["result"]["protocolVersion"], answered);
        }
    }
}

//! The client's builtins: `mcp-connect`, `mcp-tools`, `mcp-call`, `mcp-resources`,
//! `mcp-read`, `mcp-prompts`, `mcp-prompt`, `mcp-close`.
//!
//! A connection is a map (`{"type" "mcp-connection" "name" … "id" …}`) naming an entry
//! of the interpreter's table of open connections, so it prints, compares and passes
//! between `pmap` items like data; `mcp-close` (or the end of the program) ends it. The
//! table is the interpreter's own: a sandboxed child evaluation starts with an empty one,
//! so a map it writes naming its caller's connection finds nothing.

use super::client::{failure_of, Client, DEFAULT_TIMEOUT};
use super::http::Http;
use super::protocol::joined_text;
use super::stdio::Stdio;
use super::tools::{call_tool, tool_tasks};
use super::transport::Inbox;
use crate::builtins::{builtin_table, list_arg, seconds_arg, split_options, str_arg, type_error};
use crate::error::{Error, Reason, Result};
use crate::eval::env::Env;
use crate::eval::Interp;
use crate::process::{Confinement, ProcessSpec};
use crate::task::lossy_json;
use crate::task::result::task_result;
use crate::value::{from_json, Entries, Value};
use serde_json::{json, Value as Json};
use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

builtin_table! {
    /// `(mcp-connect name :command [prog arg…] :env {…} :timeout s)` or `(mcp-connect name :url "http://…/mcp")`: starts or reaches an MCP server and returns a connection. `(mcp-connect "everything" :command ["npx" "@modelcontextprotocol/server-everything"])`
    "mcp-connect", 1, Some(9) => mcp_connect;
    /// `(mcp-tools c)`: the server's tools as tasks named `NAME/tool`, with its descriptions and input schemas. `(mcp-tools c)` ⇒ `(<task everything/echo> …)`
    "mcp-tools", 1, Some(1) => mcp_tools;
    /// `(mcp-call c tool args)`: calls a tool with a map of arguments; a TaskResult (an `isError` answer fails with `tool_execution_error`). `(mcp-call c "get-sum" {"a" 1 "b" 2})`
    "mcp-call", 2, Some(3) => mcp_call;
    /// `(mcp-resources c)`: the server's resources, as `{"uri" … "name" …}` maps. `(mcp-resources c)`
    "mcp-resources", 1, Some(1) => mcp_resources;
    /// `(mcp-read c uri)`: a resource as a TaskResult: `content` its text, `parsedContent` its contents as the server sent them. `(mcp-read c "demo://resource/static/document/architecture.md")`
    "mcp-read", 2, Some(2) => mcp_read;
    /// `(mcp-prompts c)`: the server's prompts, as `{"name" … "arguments" …}` maps. `(mcp-prompts c)`
    "mcp-prompts", 1, Some(1) => mcp_prompts;
    /// `(mcp-prompt c name args)`: a prompt's messages as `{"role" … "content" …}` maps (for `conversation :messages`). `(mcp-prompt c "simple-prompt")`
    "mcp-prompt", 2, Some(3) => mcp_prompt;
    /// `(mcp-close c)`: ends the connection (the server is stopped); nil. `(mcp-close c)`
    "mcp-close", 1, Some(1) => mcp_close;
}

/// The `type` of a connection value.
const CONNECTION: &str = "mcp-connection";

/// The connections an interpreter opened, by the id their value holds (a layer state:
/// see `Interp::layer_state`); those still open are closed with the interpreter.
#[derive(Default)]
struct Connections(RefCell<HashMap<u64, Arc<Client>>>);

impl Connections {
    fn close_all(&self) {
        let clients: Vec<Arc<Client>> = self.0.borrow_mut().drain().map(|(_, c)| c).collect();
        for client in clients {
            client.close();
        }
    }
}

impl Drop for Connections {
    fn drop(&mut self) {
        self.close_all();
    }
}

/// Ids are unique in the process, so one never names another interpreter's connection
/// by chance.
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

fn open(interp: &Interp) -> Rc<Connections> {
    interp.layer_state::<Connections>()
}

/// Closes every connection `interp` still has open (the program ends).
pub fn close_all(interp: &Interp) {
    open(interp).close_all();
}

fn mcp_connect(interp: &Interp, args: &[Value], _: &Env) -> Result<Value> {
    const WHO: &str = "mcp-connect";
    let (rest, given) = split_options(WHO, args, &["command", "url", "env", "timeout"])?;
    let [name] = rest else {
        return Err(Error::eval(format!(
            "{WHO}: expected a name, then :command [...] or :url \"…\""
        )));
    };
    let name = match name {
        Value::Str(s) => s.to_string(),
        other => other
            .symbol_name()
            .ok_or_else(|| type_error(WHO, "a name (a string)", other))?
            .to_owned(),
    };
    // What the call does not say, the configuration file's `[mcp.NAME]` may.
    let configured = configured_server(&name)?;
    let option = |key: &str| {
        given
            .iter()
            .find(|(k, _)| *k == key)
            .map(|(_, v)| v)
            .or_else(|| configured.iter().find(|(k, _)| k == key).map(|(_, v)| v))
    };
    let timeout = match option("timeout") {
        None => DEFAULT_TIMEOUT,
        Some(seconds) => seconds_arg(WHO, "timeout", seconds)?,
    };
    let interrupted = || interp.check_interrupt();
    let client = match (option("command"), option("url")) {
        (Some(command), None) => {
            let spec = server_program(interp, command, option("env"))?;
            let (transport, incoming) = Stdio::start(&spec).map_err(|e| {
                let message = format!("cannot start {}: {e}", spec.program());
                failure_of(&name, Reason::ToolExecutionError, message)
            })?;
            Client::connect(&name, Box::new(transport), incoming, timeout, &interrupted)?
        }
        (None, Some(url)) => {
            let url = str_arg(WHO, url)?;
            interp.limits.capabilities.check_url(url)?;
            let incoming = Arc::new(Inbox::default());
            let transport = Http::new(url, timeout, incoming.clone());
            Client::connect(&name, Box::new(transport), incoming, timeout, &interrupted)?
        }
        (Some(_), Some(_)) => {
            return Err(Error::eval(format!(
                "{WHO}: give :command or :url, not both"
            )))
        }
        (None, None) => {
            return Err(Error::eval(format!(
                "{WHO}: give :command [...] (a server run over stdio) or :url \"…\" \
                 (streamable HTTP), or name a server of the configuration file's [mcp.NAME] \
                 tables (`tasklisp config` shows them); {name:?} is none of them"
            )))
        }
    };
    Ok(register(interp, client))
}

/// The `[mcp.NAME]` table of the configuration file as `mcp-connect` options
/// (`command`, `url`, `env`, `timeout`); none when the file names no such server.
fn configured_server(name: &str) -> Result<Vec<(String, Value)>> {
    let config = crate::config::load(&|var| std::env::var(var).ok())?;
    let Some(Json::Object(entry)) = config.mcp.get(name) else {
        return Ok(Vec::new());
    };
    Ok(entry
        .iter()
        .filter(|(key, _)| ["command", "url", "env", "timeout"].contains(&key.as_str()))
        .map(|(key, value)| (key.clone(), from_json(value)))
        .collect())
}

/// The program of a stdio server, as the sandbox allows it.
fn server_program(interp: &Interp, command: &Value, env: Option<&Value>) -> Result<ProcessSpec> {
    const WHO: &str = "mcp-connect";
    let argv = list_arg(WHO, command)?
        .iter()
        .map(|word| str_arg(WHO, &word).map(str::to_owned))
        .collect::<Result<Vec<String>>>()?;
    let Some(program) = argv.first() else {
        return Err(Error::eval(format!("{WHO}: :command is empty")));
    };
    let executable = interp.limits.capabilities.exec_program(program)?;
    let mut spec = ProcessSpec::new(argv);
    spec.executable = executable;
    spec.confine = Confinement::of(&interp.limits.capabilities);
    spec.stdin = Some(Vec::new());
    spec.clear_env = true;
    spec.env = crate::process::inherited_env(&[]);
    if let Some(env) = env {
        let Some(map) = env.as_map() else {
            return Err(type_error(WHO, ":env as a map of strings", env));
        };
        for (key, value) in &map.entries {
            let value = str_arg(WHO, value)?;
            spec.env.push((key.to_string(), value.to_owned()));
        }
    }
    Ok(spec)
}

/// Puts the client in the interpreter's table; its value.
fn register(interp: &Interp, client: Client) -> Value {
    let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
    let server = client.server.get().cloned().unwrap_or_default();
    let mut entries = Entries::new();
    let mut put = |key: &str, value: Value| {
        entries.insert(Rc::from(key), value);
    };
    put("type", Value::from(CONNECTION));
    put("name", Value::from(client.name.as_str()));
    put("id", Value::Int(i64::try_from(id).unwrap_or(i64::MAX)));
    put("protocolVersion", Value::from(client.version()));
    put(
        "server",
        from_json(server.get("serverInfo").unwrap_or(&Json::Null)),
    );
    open(interp).0.borrow_mut().insert(id, Arc::new(client));
    Value::map(entries)
}

/// The id and name of the connection a value is.
fn connection_id<'a>(who: &str, value: &'a Value) -> Result<(Option<u64>, &'a str)> {
    let map = value
        .as_map()
        .filter(|m| m.get("type").and_then(Value::as_str) == Some(CONNECTION))
        .ok_or_else(|| type_error(who, "an MCP connection", value))?;
    let id = match map.get("id") {
        Some(Value::Int(id)) => u64::try_from(*id).ok(),
        _ => None,
    };
    Ok((id, map.get("name").and_then(Value::as_str).unwrap_or("?")))
}

/// The open connection of `interp` a value names.
fn connection(interp: &Interp, who: &str, value: &Value) -> Result<Arc<Client>> {
    let (id, name) = connection_id(who, value)?;
    let found = id.and_then(|id| open(interp).0.borrow().get(&id).cloned());
    found.ok_or_else(|| {
        Error::eval(format!(
            "{who}: no such connection: the connection to MCP server `{name}` is closed, \
             or was not opened by this evaluation"
        ))
    })
}

/// Arguments given as a map (or nothing), as a JSON object.
fn arguments(who: &str, args: Option<&Value>) -> Result<Json> {
    match args {
        None | Some(Value::Nil) => Ok(json!({})),
        Some(value @ Value::Map(_)) => Ok(lossy_json(value)),
        Some(other) => Err(type_error(who, "arguments as a map", other)),
    }
}

fn mcp_tools(interp: &Interp, args: &[Value], _: &Env) -> Result<Value> {
    let client = connection(interp, "mcp-tools", first(args))?;
    let interrupted = || interp.check_interrupt();
    Ok(Value::list(tool_tasks(&client, &interrupted)?))
}

fn mcp_call(interp: &Interp, args: &[Value], _: &Env) -> Result<Value> {
    let client = connection(interp, "mcp-call", first(args))?;
    let tool = str_arg("mcp-call", args.get(1).unwrap_or(&Value::Nil))?;
    let arguments = arguments("mcp-call", args.get(2))?;
    let observer = &interp.tasks.observer;
    let logged = observer.begin_task(
        &interp.state.task.observe,
        &format!("{}/{tool}", client.name),
    );
    observer.mark_external_call(&interp.state.task.observe);
    let result = call_tool(interp, &client, tool, arguments);
    observer.end_task(&interp.state.task.observe, logged, &result);
    result
}

fn mcp_resources(interp: &Interp, args: &[Value], _: &Env) -> Result<Value> {
    listing(interp, args, "mcp-resources", "resources/list", "resources")
}

fn mcp_prompts(interp: &Interp, args: &[Value], _: &Env) -> Result<Value> {
    listing(interp, args, "mcp-prompts", "prompts/list", "prompts")
}

fn listing(interp: &Interp, args: &[Value], who: &str, method: &str, key: &str) -> Result<Value> {
    let client = connection(interp, who, first(args))?;
    let interrupted = || interp.check_interrupt();
    let items = client.list(method, key, &interrupted)?;
    Ok(Value::list(items.iter().map(from_json).collect()))
}

fn mcp_read(interp: &Interp, args: &[Value], _: &Env) -> Result<Value> {
    let client = connection(interp, "mcp-read", first(args))?;
    let uri = str_arg("mcp-read", args.get(1).unwrap_or(&Value::Nil))?;
    let interrupted = || interp.check_interrupt();
    let answer = client.request("resources/read", json!({"uri": uri}), &interrupted)?;
    let contents = answer.get("contents").cloned().unwrap_or(json!([]));
    let text: Vec<&str> = contents
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|c| c.get("text").and_then(Json::as_str))
        .collect();
    let mut notes = Entries::new();
    notes.insert(Rc::from("server"), Value::from(client.name.as_str()));
    notes.insert(Rc::from("uri"), Value::from(uri));
    let name = format!("{}/resources/read", client.name);
    Ok(task_result(
        &name,
        text.join("\n"),
        from_json(&contents),
        notes,
    ))
}

fn mcp_prompt(interp: &Interp, args: &[Value], _: &Env) -> Result<Value> {
    let client = connection(interp, "mcp-prompt", first(args))?;
    let name = str_arg("mcp-prompt", args.get(1).unwrap_or(&Value::Nil))?;
    // Prompt arguments are strings on the wire; other data is sent as its JSON text.
    let arguments: serde_json::Map<String, Json> = match arguments("mcp-prompt", args.get(2))? {
        Json::Object(given) => given
            .into_iter()
            .map(|(k, v)| match v {
                Json::String(_) => (k, v),
                other => (k, Json::from(other.to_string())),
            })
            .collect(),
        _ => serde_json::Map::new(),
    };
    let params = json!({"name": name, "arguments": arguments});
    let interrupted = || interp.check_interrupt();
    let answer = client.request("prompts/get", params, &interrupted)?;
    let messages = answer.get("messages").and_then(Json::as_array);
    let messages = messages.into_iter().flatten().map(|message| {
        let content = message.get("content").unwrap_or(&Json::Null);
        let content = match content.get("type").and_then(Json::as_str) {
            Some("text") => Json::from(joined_text(content)),
            _ => content.clone(),
        };
        let role = message.get("role").cloned().unwrap_or(Json::Null);
        from_json(&json!({"role": role, "content": content}))
    });
    Ok(Value::list(messages.collect()))
}

fn mcp_close(interp: &Interp, args: &[Value], _: &Env) -> Result<Value> {
    let (id, _) = connection_id("mcp-close", first(args))?;
    // Taken out of the table before closing: closing waits for the server a moment.
    let client = id.and_then(|id| open(interp).0.borrow_mut().remove(&id));
    if let Some(client) = client {
        client.close();
    }
    Ok(Value::Nil)
}

fn first(args: &[Value]) -> &Value {
    args.first().unwrap_or(&Value::Nil)
}

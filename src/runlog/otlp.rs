//! A run of the log as OpenTelemetry traces, sent over OTLP/HTTP in its JSON encoding:
//! a span for the run, one per task call and model call (`chat MODEL`, with the GenAI
//! semantic conventions' `gen_ai.*` attributes) and one per tool call the model asked
//! for (`execute_tool NAME`), parents as the log links the calls. Written directly
//! (serde_json and the HTTP client tasklisp has) rather than with the `opentelemetry`
//! crates: see docs/OBSERVABILITY.md.
//!
//! Ids are derived from the run's id and the calls' numbers, so exporting a run again
//! gives the same trace. Without `content`, no text a program sent or a model answered
//! leaves: not as attributes, not in a span's name (an `eval`'s code or a `prompt`'s
//! text), not in an error's status (only its type and reason).

use super::query;
use rusqlite::{params, Connection};
use serde_json::{json, Value as Json};
use std::time::Duration;

/// Where to send and what.
#[derive(Clone, Debug)]
pub struct Export {
    /// A base URL (`/v1/traces` is added, as OTLP exporters do) or the traces URL.
    pub endpoint: String,
    /// Message contents (prompts, answers, tool arguments) as attributes.
    pub content: bool,
}

impl Export {
    /// The traces URL as shown in messages: its credentials hidden.
    pub fn shown_url(&self) -> String {
        crate::secrets::Secrets::of_url(&self.endpoint).scrub(&self.traces_url())
    }

    pub fn traces_url(&self) -> String {
        let base = self.endpoint.trim_end_matches('/');
        if base.ends_with("/v1/traces") {
            base.to_owned()
        } else {
            format!("{base}/v1/traces")
        }
    }
}

/// Sends run `run_id` of the log at `conn`; returns how many spans went.
pub fn export(conn: &Connection, run_id: &str, export: &Export) -> Result<usize, String> {
    let body = traces(conn, run_id, export.content).map_err(|e| e.to_string())?;
    let spans = body
        .pointer("/resourceSpans/0/scopeSpans/0/spans")
        .and_then(Json::as_array)
        .map_or(0, Vec::len);
    // A redirect is answered, not followed: a collector does not redirect, one to
    // another origin would take the run's traces elsewhere, and ureq panics on a
    // redirect whose chunked body ends early (as the providers' client does).
    let config = ureq::Agent::config_builder()
        .timeout_global(Some(Duration::from_secs(10)))
        .http_status_as_error(false)
        .max_redirects(0)
        .max_redirects_will_error(false)
        .build();
    let agent = ureq::Agent::new_with_config(config);
    let shown = export.shown_url();
    let scrub = crate::secrets::Secrets::of_url(&export.endpoint);
    let response = agent
        .post(&export.traces_url())
        .header("content-type", "application/json")
        .send(body.to_string())
        .map_err(|e| scrub.scrub(&format!("{shown}: {e}")))?;
    let status = response.status();
    if !status.is_success() {
        return Err(format!("{shown} answered {status}"));
    }
    Ok(spans)
}

/// The OTLP JSON of a run (`ExportTraceServiceRequest`).
pub fn traces(conn: &Connection, run_id: &str, content: bool) -> rusqlite::Result<Json> {
    let (command, script, status, started_ms, ended_ms): (
        String,
        String,
        String,
        i64,
        Option<i64>,
    ) = conn.query_row(
        "SELECT command, script, status, started_ms, ended_ms FROM runs WHERE id = ?1",
        params![run_id],
        |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?)),
    )?;
    let calls = query::calls(conn, run_id)?;
    let ids = Ids::of(run_id);
    let last_end = calls.iter().map(end_ms).fold(started_ms as f64, f64::max);
    let run_end = ended_ms.map_or(last_end, |e| e as f64);
    let mut spans = vec![span(
        &ids,
        ids.run(),
        None,
        run_span_name(&command, &script, content),
        1,
        (started_ms as f64, run_end),
        vec![
            attribute("tasklisp.run.id", json!(run_id)),
            attribute("tasklisp.run.command", json!(command)),
            attribute("tasklisp.run.status", json!(status)),
        ],
        (status != "ok").then(|| status.clone()),
    )];
    for call in &calls {
        spans.extend(call_spans(&ids, call, &calls, content));
    }
    Ok(json!({"resourceSpans": [{
        "resource": {"attributes": [attribute("service.name", json!("tasklisp"))]},
        "scopeSpans": [{
            "scope": {"name": "tasklisp", "version": env!("CARGO_PKG_VERSION")},
            "spans": spans,
        }],
    }]}))
}

/// The run's span is named by its command and the files it ran (`run s.sexp`); the text
/// an `eval`, a `prompt` or the REPL was given is content, in the name only with
/// `content`.
fn run_span_name(command: &str, script: &str, content: bool) -> String {
    if content || matches!(command, "run" | "test" | "mcp") {
        format!("{command} {script}")
    } else {
        command.to_owned()
    }
}

/// A failed call's status message: its error's message with `content` (it may quote
/// the prompt or the answer), else only its type and reason.
fn error_status(call: &Json, content: bool) -> Option<String> {
    if call["status"] == "ok" {
        return None;
    }
    let error = &call["error"];
    let message = error["message"].as_str().filter(|_| content);
    let kind = [&error["type"], &error["reason"]]
        .into_iter()
        .filter_map(Json::as_str)
        .collect::<Vec<_>>()
        .join(" ");
    Some(match message {
        Some(message) => message.to_owned(),
        None if kind.is_empty() => call["status"].as_str().unwrap_or("error").to_owned(),
        None => kind,
    })
}

/// The spans of one row: a task call's, or a model call's and those of the tools it
/// asked for.
fn call_spans(ids: &Ids, call: &Json, calls: &[Json], content: bool) -> Vec<Json> {
    let seq = call["seq"].as_i64().unwrap_or_default();
    let parent = call["parent"].as_i64().map_or(ids.run(), |p| ids.call(p));
    let times = (
        call["started_ms"].as_f64().unwrap_or_default(),
        end_ms(call),
    );
    let error = error_status(call, content);
    let task = call["task"].as_str().unwrap_or_default();
    if call["kind"] != "model" {
        let attributes = vec![attribute("tasklisp.task.name", json!(task))];
        let name = format!("{} {task}", call["kind"].as_str().unwrap_or("task"));
        return vec![span(
            ids,
            ids.call(seq),
            Some(parent),
            name,
            1,
            times,
            attributes,
            error,
        )];
    }
    let model = call["model"].as_str().unwrap_or("unknown");
    let mut attributes = vec![
        attribute("gen_ai.operation.name", json!("chat")),
        attribute("gen_ai.provider.name", call["provider"].clone()),
        attribute("gen_ai.request.model", json!(model)),
        attribute("gen_ai.response.model", json!(model)),
        attribute("gen_ai.usage.input_tokens", call["input_tokens"].clone()),
        attribute("gen_ai.usage.output_tokens", call["output_tokens"].clone()),
        attribute("tasklisp.task.name", json!(task)),
        attribute("tasklisp.cache_hit", call["cache_hit"].clone()),
    ];
    if let Some(reason) = call["finish_reason"].as_str() {
        attributes.push(attribute("gen_ai.response.finish_reasons", json!([reason])));
    }
    if content {
        attributes.push(attribute(
            "gen_ai.input.messages",
            json!(call["messages"].to_string()),
        ));
        attributes.push(attribute("gen_ai.output.messages", call["answer"].clone()));
    }
    let name = format!("chat {model}");
    let mut spans = vec![span(
        ids,
        ids.call(seq),
        Some(parent.clone()),
        name,
        3,
        times,
        attributes,
        error,
    )];
    spans.extend(tool_spans(ids, call, calls, parent, times.1, content));
    spans
}

/// The spans of the tools a model call asked for: each runs after the answer that asked
/// for it (`answered`, in ms), until the next call made in the same task call (or that
/// answer, when there is none).
fn tool_spans(
    ids: &Ids,
    call: &Json,
    calls: &[Json],
    parent: String,
    answered: f64,
    content: bool,
) -> Vec<Json> {
    let seq = call["seq"].as_i64().unwrap_or_default();
    let until = calls
        .iter()
        .filter(|c| c["parent"] == call["parent"] && c["seq"].as_i64() > Some(seq))
        .map(|c| c["started_ms"].as_f64().unwrap_or(answered))
        .next()
        .unwrap_or(answered)
        .max(answered);
    let mut spans = Vec::new();
    for (n, tool) in call["tool_calls"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
    {
        let name = tool["name"].as_str().unwrap_or_default();
        let mut attributes = vec![
            attribute("gen_ai.operation.name", json!("execute_tool")),
            attribute("gen_ai.tool.name", json!(name)),
            attribute("gen_ai.tool.call.id", tool["id"].clone()),
        ];
        if content {
            let arguments = tool["arguments"].to_string();
            attributes.push(attribute("gen_ai.tool.call.arguments", json!(arguments)));
        }
        spans.push(span(
            ids,
            ids.tool(seq, n),
            Some(parent.clone()),
            format!("execute_tool {name}"),
            1,
            (answered, until),
            attributes,
            None,
        ));
    }
    spans
}

fn end_ms(call: &Json) -> f64 {
    call["started_ms"].as_f64().unwrap_or_default()
        + call["latency_ms"].as_f64().unwrap_or_default()
}

/// The trace's id and its spans', from the run's id.
struct Ids {
    run_id: String,
    trace: String,
}

impl Ids {
    fn of(run_id: &str) -> Ids {
        Ids {
            run_id: run_id.to_owned(),
            trace: crate::digest::sha256_hex(run_id.as_bytes(), 16),
        }
    }

    fn span(&self, what: &str) -> String {
        crate::digest::sha256_hex(format!("{}/{what}", self.run_id).as_bytes(), 8)
    }

    fn run(&self) -> String {
        self.span("run")
    }

    fn call(&self, seq: i64) -> String {
        self.span(&seq.to_string())
    }

    fn tool(&self, seq: i64, n: usize) -> String {
        self.span(&format!("{seq}/tool/{n}"))
    }
}

/// One span; `kind` is OTLP's (1 internal, 3 client); times in milliseconds.
#[allow(clippy::too_many_arguments)]
fn span(
    ids: &Ids,
    id: String,
    parent: Option<String>,
    name: String,
    kind: u8,
    (start, end): (f64, f64),
    attributes: Vec<Json>,
    error: Option<String>,
) -> Json {
    let nanos = |ms: f64| ((ms * 1e6) as u64).to_string();
    let mut span = json!({
        "traceId": ids.trace,
        "spanId": id,
        "name": name,
        "kind": kind,
        "startTimeUnixNano": nanos(start),
        "endTimeUnixNano": nanos(end.max(start)),
        "attributes": attributes.into_iter().filter(|a| !a["value"].is_null()).collect::<Vec<_>>(),
        "status": match &error {
            Some(message) => json!({"code": 2, "message": message}),
            None => json!({"code": 1}),
        },
    });
    if let (Some(parent), Some(fields)) = (parent, span.as_object_mut()) {
        fields.insert("parentSpanId".into(), json!(parent));
    }
    span
}

/// An attribute in OTLP's JSON: `{"key" …, "value": {"stringValue" …}}` and the like;
/// a null value gives a null `value` (left out by [`span`]).
fn attribute(key: &str, value: Json) -> Json {
    json!({"key": key, "value": any_value(&value)})
}

fn any_value(value: &Json) -> Json {
    match value {
        Json::Null => Json::Null,
        Json::Bool(b) => json!({"boolValue": b}),
        Json::Number(n) if n.is_i64() || n.is_u64() => json!({"intValue": n.to_string()}),
        Json::Number(n) => json!({"doubleValue": n.as_f64()}),
        Json::String(s) => json!({"stringValue": s}),
        Json::Array(items) => {
            json!({"arrayValue": {"values": items.iter().map(any_value).collect::<Vec<_>>()}})
        }
        Json::Object(_) => json!({"stringValue": value.to_string()}),
    }
}

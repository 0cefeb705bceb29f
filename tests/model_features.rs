//! Model features against fake OpenAI and Anthropic servers, through the binary: the
//! open options (`reasoning_effort`, penalties, `service_tier`, `extra_body`) in the
//! exact bodies, streamed and not; reasoning in `notes.reasoning` and the run log, never
//! in `content`; tool names the providers refuse sent under derived names and mapped
//! back; `:tool-choice`, `:choice` and `:grammar` in each wire form; bad values refused
//! before any request.

#![cfg(unix)]

#[path = "common/binary.rs"]
mod binary;
#[path = "common/fake_server.rs"]
mod fake_server;

use fake_server::{events_reply, reply, FakeServer, Reply};
use serde_json::{json, Value as Json};
use std::path::Path;

/// Runs `args` in `dir` with the log at `dir/log.db` and no keys: status, stdout, stderr.
fn tasklisp(dir: &Path, args: &[&str]) -> (Option<i32>, String, String) {
    let log = dir.join("log.db");
    let log = log.to_str().unwrap();
    let run = binary::run_binary(dir, args, &[("TASKLISP_LOG", log)]);
    (run.status, run.stdout, run.stderr)
}

/// `tasklisp` that must succeed; its stdout.
fn ok(dir: &Path, args: &[&str]) -> String {
    let (status, out, err) = tasklisp(dir, args);
    assert_eq!(status, Some(0), "{err}");
    out
}

fn openai_flags(base: &str) -> Vec<String> {
    [
        "--provider",
        "openai",
        "--base-url",
        &format!("{base}/v1"),
        "-m",
        "gpt-test",
    ]
    .map(str::to_owned)
    .to_vec()
}

fn anthropic_flags(base: &str) -> Vec<String> {
    [
        "--provider",
        "anthropic",
        "--base-url",
        base,
        "-m",
        "claude-test",
    ]
    .map(str::to_owned)
    .to_vec()
}

/// `flags` then `rest`, as the argument list.
fn args<'a>(flags: &'a [String], rest: &[&'a str]) -> Vec<&'a str> {
    flags
        .iter()
        .map(String::as_str)
        .chain(rest.iter().copied())
        .collect()
}

/// The `reasoning` column of the latest run's model calls.
fn logged_reasoning(dir: &Path) -> Vec<Json> {
    let runs: Json = serde_json::from_str(&ok(dir, &["--json", "log"])).unwrap();
    let id = runs[0]["id"].as_str().unwrap().to_owned();
    let tree: Json = serde_json::from_str(&ok(dir, &["--json", "log", &id])).unwrap();
    let calls = tree["calls"].as_array().cloned().unwrap_or_default();
    calls
        .into_iter()
        .filter(|c| c["kind"] == "model")
        .map(|c| c["reasoning"].clone())
        .collect()
}

const OPTIONS_TASK: &str = r#"(deftask ask (q) :prompt "{{q}}" :frequency-penalty 0.5 :presence-penalty -0.5 :service-tier "flex")
(define r (ask "Why?"))
(println (json-stringify [r.content r.notes.reasoning]))"#;

/// Runs `OPTIONS_TASK` whole, then streamed: both times the answer is the content and
/// the reasoning is apart (in the run log too), never shown as the answer.
fn ask_whole_then_streamed(dir: &Path, flags: &[String], rest: &[&str]) {
    let whole = ok(dir, &args(flags, &[rest, &["eval", OPTIONS_TASK]].concat()));
    assert_eq!(whole.lines().next(), Some(r#"["Because.","Think first."]"#));
    assert_eq!(logged_reasoning(dir), [json!("Think first.")]);
    let (status, streamed, shown) = tasklisp(
        dir,
        &args(flags, &[rest, &["--stream", "eval", OPTIONS_TASK]].concat()),
    );
    assert_eq!(status, Some(0), "{shown}");
    assert!(
        streamed.contains(r#"["Because.","Think first."]"#),
        "{streamed}"
    );
    assert!(
        shown.contains("Because.") && !shown.contains("Think"),
        "{shown}"
    );
}

fn openai_reasoned() -> Json {
    json!({"choices": [{"index": 0, "finish_reason": "stop", "message":
        {"role": "assistant", "content": "Because.", "reasoning_content": "Think first."}}]})
}

#[test]
fn openai_sends_the_open_options_and_keeps_reasoning_apart_streamed_or_not() {
    let dir = tempfile::tempdir().unwrap();
    let streamed = events_reply(
        &[
            json!({"choices": [{"index": 0, "delta": {"role": "assistant", "reasoning_content": "Think "}}]}),
            json!({"choices": [{"index": 0, "delta": {"reasoning_content": "first."}}]}),
            json!({"choices": [{"index": 0, "delta": {"content": "Because."}, "finish_reason": "stop"}]}),
        ],
        "data: [DONE]\n\n",
    );
    let server = FakeServer::start(vec![reply(200, openai_reasoned()), streamed]);
    let flags = openai_flags(&server.base);
    let rest = [
        "-o",
        "reasoning_effort",
        "low",
        "--extra-body",
        r#"{"top_k": 3, "service_tier": "priority"}"#,
    ];
    ask_whole_then_streamed(dir.path(), &flags, &rest);
    let seen = server.finish();
    let expected = r#"{"model":"gpt-test","messages":[{"role":"user","content":"Why?"}],"frequency_penalty":0.5,"presence_penalty":-0.5,"reasoning_effort":"low","service_tier":"priority","prompt_cache_key":"ask","top_k":3}"#;
    assert_eq!(seen[0].body, expected);
    let mut body = seen[1].json();
    assert_eq!(body["stream"], json!(true));
    for key in ["stream", "stream_options"] {
        body.as_object_mut().unwrap().remove(key);
    }
    assert_eq!(body.to_string(), expected);
}

fn anthropic_thought() -> Json {
    json!({"id": "m1", "type": "message", "role": "assistant", "stop_reason": "end_turn",
        "content": [{"type": "thinking", "thinking": "Think first.", "signature": "s"},
                    {"type": "text", "text": "Because."}],
        "usage": {"input_tokens": 5, "output_tokens": 9}})
}

fn anthropic_thought_streamed() -> Reply {
    events_reply(
        &[
            json!({"type": "message_start", "message": {"id": "m1", "type": "message", "role": "assistant", "content": [], "usage": {"input_tokens": 5, "output_tokens": 0}}}),
            json!({"type": "content_block_start", "index": 0, "content_block": {"type": "thinking", "thinking": ""}}),
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": "Think first."}}),
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "signature_delta", "signature": "s"}}),
            json!({"type": "content_block_stop", "index": 0}),
            json!({"type": "content_block_start", "index": 1, "content_block": {"type": "text", "text": ""}}),
            json!({"type": "content_block_delta", "index": 1, "delta": {"type": "text_delta", "text": "Because."}}),
            json!({"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 9}}),
            json!({"type": "message_stop"}),
        ],
        "",
    )
}

/// `reasoning_effort` becomes extended thinking with its budget added to `max_tokens`;
/// penalties the API does not take are left out; `service_tier` and `extra_body` go as
/// they are.
#[test]
fn anthropic_thinks_within_the_budget_and_keeps_thinking_apart_streamed_or_not() {
    let dir = tempfile::tempdir().unwrap();
    let server = FakeServer::start(vec![
        reply(200, anthropic_thought()),
        anthropic_thought_streamed(),
    ]);
    let flags = anthropic_flags(&server.base);
    let rest = [
        "-o",
        "reasoning_effort",
        "medium",
        "-o",
        "max_tokens",
        "100",
        "--extra-body",
        r#"{"top_k": 3}"#,
    ];
    ask_whole_then_streamed(dir.path(), &flags, &rest);
    let seen = server.finish();
    let expected = r#"{"model":"claude-test","max_tokens":8292,"messages":[{"role":"user","content":"Why?"}],"service_tier":"flex","thinking":{"type":"enabled","budget_tokens":8192},"top_k":3}"#;
    assert_eq!(seen[0].body, expected);
    let mut body = seen[1].json();
    assert_eq!(
        body.as_object_mut().unwrap().remove("stream"),
        Some(json!(true))
    );
    assert_eq!(body.to_string(), expected);
}

const TOOL_PROGRAM: &str = r#"(deftask rv/sum (a b) :description "Add" :param-types {"a" "integer" "b" "integer"} (+ a b))
(deftask calc (q) :prompt "{{q}}" :tools [rv/sum] :tool-choice "rv/sum")
(define r (calc "2+3?"))
(println (json-stringify [r.content r.notes.toolCalls]))"#;

/// The derived name of `rv/sum`: `rv_sum-` and the first 8 hex digits of its SHA-256.
const WIRE: &str = "rv_sum-d4cf39ff";

fn openai_tool_call() -> Json {
    json!({"choices": [{"index": 0, "finish_reason": "tool_calls", "message": {"role": "assistant", "content": null,
        "tool_calls": [{"id": "c1", "type": "function", "function": {"name": WIRE, "arguments": "{\"a\":2,\"b\":3}"}}]}}]})
}

fn openai_text(content: &str) -> Json {
    json!({"choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": content}}]})
}

#[test]
fn openai_offers_a_namespaced_task_under_its_wire_name_forces_it_once_and_maps_it_back() {
    let dir = tempfile::tempdir().unwrap();
    let server = FakeServer::start(vec![
        reply(200, openai_tool_call()),
        reply(200, openai_text("5")),
    ]);
    let out = ok(
        dir.path(),
        &args(&openai_flags(&server.base), &["eval", TOOL_PROGRAM]),
    );
    assert_eq!(
        out.lines().next(),
        Some(r#"["5",[{"name":"rv/sum","arguments":{"a":2,"b":3},"result":5}]]"#)
    );
    let seen = server.finish();
    let (first, second) = (seen[0].json(), seen[1].json());
    assert_eq!(
        first["tools"],
        json!([{"type": "function", "function": {"name": WIRE, "description": "Add",
            "parameters": {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
                           "required": ["a", "b"], "additionalProperties": false}}}])
    );
    assert_eq!(
        first["tool_choice"],
        json!({"type": "function", "function": {"name": WIRE}})
    );
    assert_eq!(second["tool_choice"], json!("auto"));
    assert_eq!(
        second["messages"][1]["tool_calls"][0]["function"]["name"],
        WIRE
    );
}

#[test]
fn anthropic_spells_the_tool_choice_its_way() {
    let dir = tempfile::tempdir().unwrap();
    let tool_use = json!({"id": "m1", "type": "message", "role": "assistant", "stop_reason": "tool_use",
        "content": [{"type": "tool_use", "id": "t1", "name": WIRE, "input": {"a": 2, "b": 3}}],
        "usage": {"input_tokens": 5, "output_tokens": 9}});
    let text = json!({"id": "m2", "type": "message", "role": "assistant", "stop_reason": "end_turn",
        "content": [{"type": "text", "text": "5"}], "usage": {"input_tokens": 5, "output_tokens": 1}});
    let none = r#"(deftask rv/sum (a b) (+ a b))
(deftask quiet (q) :prompt "{{q}}" :tools [rv/sum] :tool-choice "none")
(println (get (quiet "hi") "content"))"#;
    let required = TOOL_PROGRAM.replace(":tool-choice \"rv/sum\"", ":tool-choice \"required\"");
    let server = FakeServer::start(vec![
        reply(200, tool_use.clone()),
        reply(200, text.clone()),
        reply(200, tool_use),
        reply(200, text.clone()),
        reply(200, text),
    ]);
    let flags = anthropic_flags(&server.base);
    let out = ok(dir.path(), &args(&flags, &["eval", TOOL_PROGRAM]));
    assert!(out.starts_with(r#"["5",[{"name":"rv/sum""#), "{out}");
    ok(dir.path(), &args(&flags, &["eval", &required]));
    assert_eq!(
        ok(dir.path(), &args(&flags, &["eval", none]))
            .lines()
            .next(),
        Some("5")
    );
    let choices: Vec<Json> = server
        .finish()
        .iter()
        .map(|seen| seen.json()["tool_choice"].clone())
        .collect();
    assert_eq!(
        choices,
        [
            json!({"type": "tool", "name": WIRE}),
            json!({"type": "auto"}),
            json!({"type": "any"}),
            json!({"type": "auto"}),
            json!({"type": "none"}),
        ]
    );
}

const MOOD: &str = r#"(deftask mood (text) :prompt "{{text}}" :choice ["positive" "negative" "neutral"] :retries 1)
(println (get (mood "meh") "content"))"#;

/// A server that is not llama.cpp's (its `/props` is a 404) gets `:choice` as a strict
/// JSON-Schema enum; the answer is read out of the object.
#[test]
fn openai_gets_a_choice_as_a_json_schema_enum() {
    let dir = tempfile::tempdir().unwrap();
    let server = FakeServer::start(vec![
        reply(404, json!({"error": "not found"})),
        reply(200, openai_text(r#"{"choice": "neutral"}"#)),
    ]);
    let out = ok(
        dir.path(),
        &args(&openai_flags(&server.base), &["eval", MOOD]),
    );
    assert_eq!(out.lines().next(), Some("neutral"));
    let seen = server.finish();
    assert_eq!(
        (seen[0].method.as_str(), seen[0].path.as_str()),
        ("GET", "/props")
    );
    assert_eq!(
        seen[1].json()["response_format"],
        json!({"type": "json_schema", "json_schema": {"name": "mood", "strict": true, "schema": {
            "type": "object", "properties": {"choice": {"type": "string", "enum": ["positive", "negative", "neutral"]}},
            "required": ["choice"], "additionalProperties": false}}})
    );
}

/// llama.cpp's server (recognised by its `/props`, once) gets `:choice` as a GBNF
/// grammar and `:grammar` as it is; an answer outside the choices is asked again.
#[test]
fn a_llama_server_gets_grammars_and_is_asked_about_once() {
    let dir = tempfile::tempdir().unwrap();
    let props = json!({"default_generation_settings": {"n_ctx": 4096}, "build_info": "b1"});
    let server = FakeServer::start(vec![
        reply(200, props),
        reply(200, openai_text("unsure")),
        reply(200, openai_text("positive")),
        reply(200, openai_text("42")),
    ]);
    let program = format!(
        r#"{MOOD}
(deftask digits () :prompt "A number." :grammar "root ::= [0-9]+")
(println (get (digits) "content"))"#
    );
    let out = ok(
        dir.path(),
        &args(&openai_flags(&server.base), &["eval", &program]),
    );
    assert_eq!(out.lines().take(2).collect::<Vec<_>>(), ["positive", "42"]);
    let seen = server.finish();
    assert_eq!(seen[0].path, "/props");
    let grammar = r#"root ::= "positive" | "negative" | "neutral""#;
    assert_eq!(
        seen[1].body,
        json!({"model": "gpt-test", "messages": [{"role": "user", "content": "meh"}], "grammar": grammar, "prompt_cache_key": "mood"})
            .to_string()
    );
    assert_eq!(seen[2].json()["grammar"], grammar);
    assert_eq!(seen[3].json()["grammar"], "root ::= [0-9]+");
    assert!(seen[3].json().get("response_format").is_none());
}

#[test]
fn anthropic_gets_a_choice_as_the_answer_tools_enum() {
    let dir = tempfile::tempdir().unwrap();
    let answer = json!({"id": "m1", "type": "message", "role": "assistant", "stop_reason": "tool_use",
        "content": [{"type": "tool_use", "id": "t1", "name": "mood", "input": {"choice": "negative"}}],
        "usage": {"input_tokens": 5, "output_tokens": 9}});
    let server = FakeServer::start(vec![reply(200, answer)]);
    let out = ok(
        dir.path(),
        &args(&anthropic_flags(&server.base), &["eval", MOOD]),
    );
    assert_eq!(out.lines().next(), Some("negative"));
    let body = server.finish()[0].json();
    assert_eq!(body["tool_choice"], json!({"type": "tool", "name": "mood"}));
    assert_eq!(
        body["tools"][0]["input_schema"]["properties"]["choice"]["enum"],
        json!(["positive", "negative", "neutral"])
    );
}

/// Each bad value is refused naming the option, before any model request: the fake
/// servers receive nothing (the OpenAI one only the `/props` question).
#[test]
fn bad_option_values_and_a_grammar_nobody_takes_are_refused_before_sending() {
    let dir = tempfile::tempdir().unwrap();
    let grammar = r#"(deftask digits () :prompt "n" :grammar "root ::= [0-9]+") (digits)"#;
    let anthropic = FakeServer::start(vec![]);
    let (status, _, err) = tasklisp(
        dir.path(),
        &args(&anthropic_flags(&anthropic.base), &["eval", grammar]),
    );
    assert_eq!(status, Some(1));
    assert!(
        err.contains("llm_error") && err.contains(":grammar"),
        "{err}"
    );
    assert!(anthropic.finish().is_empty());
    let openai = FakeServer::start(vec![reply(404, json!({}))]);
    let (status, _, err) = tasklisp(
        dir.path(),
        &args(&openai_flags(&openai.base), &["eval", grammar]),
    );
    assert_eq!(status, Some(1));
    assert!(err.contains("takes no :grammar"), "{err}");
    let seen = openai.finish();
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].path, "/props");
    let ask = r#"(deftask ask () :prompt "x") (ask)"#;
    for (flags, named) in [
        (
            vec!["-o", "reasoning_effort", "extreme"],
            "reasoning_effort",
        ),
        (vec!["--extra-body", "[1]"], "extra_body"),
        (vec!["--extra-body", "{oops"], "--extra-body"),
    ] {
        let server = FakeServer::start(vec![]);
        let all = args(
            &openai_flags(&server.base),
            &[&flags[..], &["eval", ask]].concat(),
        )
        .into_iter()
        .map(str::to_owned)
        .collect::<Vec<_>>();
        let (status, _, err) = tasklisp(
            dir.path(),
            &all.iter().map(String::as_str).collect::<Vec<_>>(),
        );
        assert_ne!(status, Some(0), "{flags:?}");
        assert!(err.contains(named), "{flags:?}: {err}");
        assert!(server.finish().is_empty());
    }
}

/// `tasklisp check` knows no tool of `:tools [add]` (an expression it does not run), so
/// it takes a `:tool-choice` naming one; a choice that is never valid is still an error.
#[test]
fn check_takes_a_tool_choice_naming_a_tool_it_cannot_see() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("calc.sexp");
    std::fs::write(
        &file,
        r#"(deftask add (a b) (+ a b))
(deftask calc (q) :prompt "{{q}}" :tools [add] :tool-choice "add")"#,
    )
    .unwrap();
    let path = file.to_str().unwrap();
    let (status, _, err) = tasklisp(dir.path(), &["check", path]);
    assert_eq!(status, Some(0), "{err}");
    std::fs::write(
        &file,
        r#"(deftask calc (q) :prompt "{{q}}" :tool-choice "required")"#,
    )
    .unwrap();
    let (status, _, err) = tasklisp(dir.path(), &["check", path]);
    assert_eq!(status, Some(1), "{err}");
    assert!(err.contains(":tool-choice"), "{err}");
}

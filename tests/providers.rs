//! The HTTP providers against a fake server on 127.0.0.1: what they send, what they
//! make of the answers, retries, timeouts, cancellation, key scrubbing, and a
//! record-then-replay run that needs no server.

use serde_json::{json, Value as Json};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tasklisp::internals::provider::build;
use tasklisp::Capabilities;
use tasklisp::{Cancel, Message, Provider, Request, Usage};

#[path = "common/fake_server.rs"]
mod fake_server;
use fake_server::{events_reply, reply, FakeServer, Reply};

const KEY: &str = "sk-test-0123456789abcdef";

fn retry_after(status: u16, seconds: u64) -> Reply {
    let mut answer = reply(status, json!({"error": {"message": "busy"}}));
    answer.headers.push(("retry-after", seconds.to_string()));
    answer
}

/// The environment the providers see: only the test key.
fn env(name: &str) -> Option<String> {
    (name == "TEST_API_KEY").then(|| KEY.to_owned())
}

fn openai(base: &str, extra: Json) -> Arc<dyn Provider> {
    let mut options = json!({
        "base_url": format!("{base}/v1"),
        "api_key_env": "TEST_API_KEY",
        "model": "gpt-test",
    });
    merge(&mut options, extra);
    build("openai", &options, &env).unwrap()
}

fn anthropic(base: &str, extra: Json) -> Arc<dyn Provider> {
    let mut options = json!({
        "base_url": base,
        "api_key_env": "TEST_API_KEY",
        "model": "claude-test",
        "max_tokens": 256,
    });
    merge(&mut options, extra);
    build("anthropic", &options, &env).unwrap()
}

fn merge(options: &mut Json, extra: Json) {
    if let (Some(map), Json::Object(extra)) = (options.as_object_mut(), extra) {
        map.extend(extra);
    }
}

fn request(prompt: &str) -> Request {
    Request {
        task: "summarize".into(),
        system: Some("You are terse.".into()),
        prompt: prompt.into(),
        round: 1,
        messages: vec![Message::system("You are terse."), Message::user(prompt)],
        ..Request::default()
    }
}

fn chat_answer(content: &str) -> Json {
    json!({
        "id": "chatcmpl-1",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 12, "completion_tokens": 3, "total_tokens": 15},
    })
}

/// Sends one request that must fail. The servers these tests start would answer in the
/// end, so the failure itself shows that the timeout or cancellation did not wait for them.
fn fails(provider: Arc<dyn Provider>, cancel: &Cancel) -> tasklisp::Error {
    provider.complete(&request("p"), cancel).unwrap_err()
}

#[test]
fn openai_sends_the_exact_body_and_headers_and_reads_usage() {
    let server = FakeServer::start(vec![reply(200, chat_answer("Short."))]);
    let response = openai(&server.base, json!({}))
        .complete(&request("Summarize: long text"), &Cancel::default())
        .unwrap();
    assert_eq!(response.content, "Short.");
    assert_eq!(response.usage, Some(Usage::new(12, 3)));
    let seen = server.finish();
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].method, "POST");
    assert_eq!(seen[0].path, "/v1/chat/completions");
    assert_eq!(
        seen[0].header("authorization"),
        Some(&*format!("Bearer {KEY}"))
    );
    assert_eq!(seen[0].header("content-type"), Some("application/json"));
    assert_eq!(
        seen[0].body,
        json!({
            "model": "gpt-test",
            "messages": [
                {"role": "system", "content": "You are terse."},
                {"role": "user", "content": "Summarize: long text"},
            ],
        })
        .to_string()
    );
}

#[test]
fn openai_json_mode_asks_for_a_json_object_and_the_task_model_wins() {
    let server = FakeServer::start(vec![reply(200, chat_answer("{\"a\": 1}"))]);
    let json_request = Request {
        json_mode: true,
        model: Some("task-model".into()),
        system: None,
        messages: vec![Message::user("Give JSON")],
        ..request("Give JSON")
    };
    let response = openai(&server.base, json!({}))
        .complete(&json_request, &Cancel::default())
        .unwrap();
    assert_eq!(response.content, "{\"a\": 1}");
    let body = server.finish()[0].json();
    assert_eq!(body["response_format"], json!({"type": "json_object"}));
    assert_eq!(body["model"], "task-model");
    assert_eq!(
        body["messages"],
        json!([{"role": "user", "content": "Give JSON"}])
    );
}

/// A chat completion stopped by the token limit inside a JSON answer (as llama-server
/// answered with `max_tokens` 45).
fn cut_off_answer() -> Json {
    json!({
        "choices": [{"index": 0, "message": {"role": "assistant",
            "content": "{\"cats\": [{\"name\":\"Felix\",\"age\":10}, {"},
            "finish_reason": "length"}],
        "usage": {"prompt_tokens": 20, "completion_tokens": 45},
    })
}

/// `--provider openai --base-url BASE -m m1`, then `rest`.
fn at_openai<'a>(base: &'a str, rest: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec!["--provider", "openai", "--base-url", base, "-m", "m1"];
    args.extend_from_slice(rest);
    args
}

/// Runs the binary with exactly `env` and `args`; gives status, stdout, stderr.
fn tasklisp_in(env: &[(&str, &str)], args: &[&str]) -> (Option<i32>, String, String) {
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_tasklisp"))
        .env_clear()
        .env("TASKLISP_LOG", "off")
        .envs(env.iter().copied())
        .args(args)
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// The stop reason is read, streamed or not: a JSON answer cut off by the token limit
/// is an `output_format_failure` naming `max_tokens` (it was returned as the first cat,
/// `COMPLETE`, repaired as "surrounding text"), and `:retries` does not ask again.
#[test]
fn openai_a_json_answer_cut_off_by_the_token_limit_fails_streamed_or_not() {
    let server = FakeServer::start(vec![
        reply(200, cut_off_answer()),
        events_reply(
            &[
                json!({"choices": [{"index": 0, "delta": {"content": "{\"cats\": ["}, "finish_reason": null}]}),
                json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "length"}]}),
            ],
            "data: [DONE]\n\n",
        ),
    ]);
    let base = format!("{}/v1", server.base);
    let program = r#"(deftask cats () :prompt "List cats" :output "json" :retries 2)
        (try (cats) (catch e (list e.reason e.details.finishReason e.details.model)))"#;
    let common = at_openai(&base, &["-o", "max_tokens", "45"]);
    let (status, out, err) = tasklisp_in(&[], &[&common[..], &["eval", program]].concat());
    assert_eq!(status, Some(0), "{err}");
    assert_eq!(out, "(\"output_format_failure\" \"length\" \"m1\")\n");
    let (status, _, err) = tasklisp_in(
        &[],
        &[
            &common[..],
            &[
                "--stream",
                "eval",
                "(deftask cats () :prompt \"List cats\" :output \"json\") (cats)",
            ],
        ]
        .concat(),
    );
    assert_eq!(status, Some(1), "{err}");
    for words in [
        "output_format_failure",
        "cut off by the token limit",
        "max_tokens",
    ] {
        assert!(err.contains(words), "{words}: {err}");
    }
    let seen = server.finish();
    assert_eq!(seen.len(), 2, "retries must not ask again");
    assert_eq!(
        seen[0].body,
        r#"{"model":"m1","messages":[{"role":"user","content":"List cats"}],"max_tokens":45,"response_format":{"type":"json_object"},"prompt_cache_key":"cats"}"#
    );
    assert_eq!(
        seen[1].body,
        r#"{"model":"m1","messages":[{"role":"user","content":"List cats"}],"max_tokens":45,"response_format":{"type":"json_object"},"prompt_cache_key":"cats","stream":true,"stream_options":{"include_usage":true}}"#
    );
}

/// A plain-text answer cut off stays a result, marked; `prompt` warns on stderr.
#[test]
fn a_text_answer_cut_off_is_complete_and_marked_truncated() {
    let mut cut = chat_answer("Once upon a");
    cut["choices"][0]["finish_reason"] = json!("length");
    let server = FakeServer::start(vec![reply(200, cut.clone()), reply(200, cut)]);
    let base = format!("{}/v1", server.base);
    let common = at_openai(&base, &[]);
    let program = r#"(deftask story () :prompt "Tell a story")
        (define r (story)) (list r.status r.notes.finishReason r.notes.truncated)"#;
    let (_, out, err) = tasklisp_in(&[], &[&common[..], &["eval", program]].concat());
    assert_eq!(out, "(\"COMPLETE\" \"length\" true)\n", "{err}");
    let (status, out, err) = tasklisp_in(&[], &[&common[..], &["prompt", "Tell a story"]].concat());
    assert_eq!((status, out.as_str()), (Some(0), "Once upon a\n"), "{err}");
    assert_eq!(
        err,
        "tasklisp: warning: the answer was cut off by the token limit (finish reason \"length\"); raise max_tokens for the whole answer\n"
    );
    server.finish();
}

#[test]
fn anthropic_reads_stop_reason_streamed_or_not() {
    let message = |stop: &str| {
        json!({"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-test",
               "content": [{"type": "text", "text": "Once"}], "stop_reason": stop,
               "usage": {"input_tokens": 5, "output_tokens": 1}})
    };
    let server = FakeServer::start(vec![
        reply(200, message("max_tokens")),
        events_reply(
            &[
                json!({"type": "message_start", "message": {"id": "msg_1", "type": "message", "role": "assistant",
                       "content": [], "model": "claude-test", "stop_reason": null,
                       "usage": {"input_tokens": 5, "output_tokens": 1}}}),
                json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Once"}}),
                json!({"type": "message_delta", "delta": {"stop_reason": "max_tokens"}, "usage": {"output_tokens": 1}}),
                json!({"type": "message_stop"}),
            ],
            "",
        ),
        reply(200, message("end_turn")),
    ]);
    let provider = anthropic(&server.base, json!({}));
    let whole = provider
        .complete(&request("p"), &Cancel::default())
        .unwrap();
    let streamed = provider
        .stream(&request("p"), &Cancel::default(), &mut |_| {})
        .unwrap();
    let finished = provider
        .complete(&request("p"), &Cancel::default())
        .unwrap();
    assert_eq!(
        [&whole, &streamed, &finished].map(|r| (r.finish_reason.clone(), r.truncated())),
        [
            (Some("max_tokens".into()), true),
            (Some("max_tokens".into()), true),
            (Some("end_turn".into()), false)
        ]
    );
    let seen = server.finish();
    assert_eq!(
        seen[0].body,
        r#"{"model":"claude-test","max_tokens":256,"system":"You are terse.","messages":[{"role":"user","content":"p"}]}"#
    );
}

/// A server that does not stream answers a streamed request with one JSON body: that
/// is the answer (it was "the stream ended before the answer was complete").
#[test]
fn a_streamed_request_answered_with_a_whole_json_body_is_that_answer() {
    let anthropic_answer = json!({"id": "msg_1", "type": "message", "role": "assistant",
        "content": [{"type": "text", "text": "Hi"}], "stop_reason": "end_turn",
        "usage": {"input_tokens": 5, "output_tokens": 1}});
    let mut charset = reply(200, chat_answer("Short."));
    charset.headers = vec![("content-type", "application/json; charset=utf-8".into())];
    let server = FakeServer::start(vec![
        reply(200, chat_answer("Short.")),
        charset,
        reply(200, anthropic_answer),
    ]);
    let mut pieces = Vec::new();
    let openai = openai(&server.base, json!({}));
    for _ in 0..2 {
        let response = openai
            .stream(&request("p"), &Cancel::default(), &mut |t| {
                pieces.push(t.to_owned())
            })
            .unwrap();
        assert_eq!(
            (response.content.as_str(), response.finish_reason.as_deref()),
            ("Short.", Some("stop"))
        );
    }
    let response = anthropic(&server.base, json!({}))
        .stream(&request("p"), &Cancel::default(), &mut |t| {
            pieces.push(t.to_owned())
        })
        .unwrap();
    assert_eq!(response.content, "Hi");
    assert_eq!(pieces, ["Short.", "Short.", "Hi"]);
    let seen = server.finish();
    assert_eq!(seen[0].json()["stream"], true);
}

/// With no provider named, the key present chooses it, with its default model.
#[test]
fn with_no_provider_named_an_openai_key_chooses_openai_and_its_default_model() {
    let server = FakeServer::start(vec![reply(200, chat_answer("Hello."))]);
    let base = format!("{}/v1", server.base);
    let (status, out, err) = tasklisp_in(
        &[("OPENAI_API_KEY", KEY), ("OPENAI_BASE_URL", &base)],
        &["prompt", "Hi"],
    );
    assert_eq!((status, out.as_str()), (Some(0), "Hello.\n"), "{err}");
    let seen = server.finish();
    assert_eq!(
        seen[0].header("authorization"),
        Some(&*format!("Bearer {KEY}"))
    );
    assert_eq!(
        seen[0].body,
        r#"{"model":"gpt-4o-mini","messages":[{"role":"user","content":"Hi"}],"prompt_cache_key":"prompt","stream":true,"stream_options":{"include_usage":true}}"#
    );
}

/// A cut-off text answer comes back from the cache still marked as cut off.
#[test]
fn a_cut_off_text_answer_comes_back_from_the_cache_marked() {
    let mut cut = chat_answer("Once upon a");
    cut["choices"][0]["finish_reason"] = json!("length");
    let server = FakeServer::start(vec![reply(200, cut)]);
    let base = format!("{}/v1", server.base);
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log.db");
    let env = [("TASKLISP_LOG", log.to_str().unwrap())];
    let program = r#"(deftask story () :prompt "Tell a story")
        (define r (story)) (list r.notes.cached r.notes.finishReason r.notes.truncated)"#;
    let args = at_openai(&base, &["--cache", "eval", program]);
    assert_eq!(tasklisp_in(&env, &args).1, "(nil \"length\" true)\n");
    assert_eq!(tasklisp_in(&env, &args).1, "(true \"length\" true)\n");
    assert_eq!(server.finish().len(), 1);
}

/// The cache answers only from answers that passed parsing, the schema and the audits,
/// keys on the server's base URL, and `tasklisp cache clear` empties it.
#[test]
fn the_cache_holds_only_answers_that_passed_and_can_be_cleared() {
    let answers = [
        "not json",
        "{\"label\": \"bug\"}",
        "{\"label\": \"bug\"}",
        "{\"label\": \"bug\"}",
    ];
    let first = FakeServer::start(
        answers[..2]
            .iter()
            .map(|a| reply(200, chat_answer(a)))
            .collect(),
    );
    let other = FakeServer::start(vec![reply(200, chat_answer(answers[2]))]);
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log.db");
    let env = [("TASKLISP_LOG", log.to_str().unwrap())];
    let program = r#"(deftask classify () :prompt "Classify: crash" :schema {"type" "object" "required" ["label"]})
        (get (get (classify) "parsedContent") "label")"#;
    let run = |server: &FakeServer| {
        let base = format!("{}/v1", server.base);
        tasklisp_in(&env, &at_openai(&base, &["--cache", "eval", program]))
    };
    // The server answers badly: the run fails, and the answer is not kept.
    assert_eq!(run(&first).0, Some(1));
    // Fixed: the rerun reaches the server, then a repeat is answered from the cache.
    assert_eq!(run(&first).1, "\"bug\"\n");
    assert_eq!(run(&first).1, "\"bug\"\n");
    assert_eq!(first.finish().len(), 2);
    // Another server with the same request is asked itself.
    assert_eq!(run(&other).1, "\"bug\"\n");
    assert_eq!(other.finish().len(), 1);
    let cleared = tasklisp_in(&env, &["cache", "clear", "--task", "nothing-else"]);
    assert_eq!(cleared.1, "removed 0 cached answers\n");
    let cleared = tasklisp_in(&env, &["cache", "clear", "--older-than", "1h"]);
    assert_eq!(cleared.1, "removed 0 cached answers\n");
    let cleared = tasklisp_in(&env, &["cache", "clear", "--task", "classify"]);
    assert_eq!(cleared.1, "removed 2 cached answers\n", "{}", cleared.2);
    // Emptied: the same request reaches the server again.
    let again = FakeServer::start(vec![reply(200, chat_answer(answers[3]))]);
    assert_eq!(run(&again).1, "\"bug\"\n");
    assert_eq!(again.finish().len(), 1);
    assert_eq!(
        tasklisp_in(&env, &["cache", "clear"]).1,
        "removed 1 cached answer\n"
    );
}

/// A JSON-Schema that strict structured output accepts as it is.
fn label_schema() -> Json {
    json!({
        "type": "object",
        "properties": {"label": {"type": "string"}},
        "required": ["label"],
        "additionalProperties": false,
    })
}

fn schema_request() -> Request {
    Request {
        task: "classify".into(),
        json_mode: true,
        schema: Some(label_schema()),
        system: None,
        messages: vec![Message::user("Classify: crash")],
        ..request("Classify: crash")
    }
}

#[test]
fn openai_sends_a_json_schema_as_strict_structured_output() {
    let server = FakeServer::start(vec![reply(200, chat_answer("{\"label\": \"bug\"}"))]);
    openai(&server.base, json!({}))
        .complete(&schema_request(), &Cancel::default())
        .unwrap();
    assert_eq!(
        server.finish()[0].json()["response_format"],
        json!({
            "type": "json_schema",
            "json_schema": {"name": "classify", "schema": label_schema(), "strict": true},
        })
    );
}

#[test]
fn a_server_that_refuses_json_schema_gets_json_object_with_the_schema_and_it_is_remembered() {
    // What llama-cpp-python (0.3) answers to a json_schema response_format: a 500, which
    // is not retried since it names response_format.
    let refusal = json!({"error": {"message": "1 validation error:\n  {'type': 'literal_error', 'loc': ('body', 'response_format', 'type'), 'msg': \"Input should be 'text' or 'json_object'\", 'input': 'json_schema'}",
        "type": "internal_server_error", "param": null, "code": null}});
    let server = FakeServer::start(vec![
        reply(500, refusal),
        reply(200, chat_answer("{\"label\": \"bug\"}")),
        reply(200, chat_answer("{\"label\": \"feature\"}")),
    ]);
    let provider = openai(&server.base, json!({}));
    let first = provider
        .complete(&schema_request(), &Cancel::default())
        .unwrap();
    assert_eq!(first.content, "{\"label\": \"bug\"}");
    provider
        .complete(&schema_request(), &Cancel::default())
        .unwrap();
    let seen = server.finish();
    assert_eq!(seen.len(), 3, "the refusal was not retried");
    let forms: Vec<Json> = seen
        .iter()
        .map(|s| s.json()["response_format"].clone())
        .collect();
    assert_eq!(forms[0]["type"], "json_schema");
    let with_schema = json!({"type": "json_object", "schema": label_schema()});
    assert_eq!(forms[1], with_schema);
    // The second call starts with the form that worked.
    assert_eq!(forms[2], with_schema);
}

#[test]
fn a_server_that_knows_only_json_object_gets_it_after_two_refusals() {
    let refusal = json!({"error": {"message": "unknown field response_format.schema"}});
    let server = FakeServer::start(vec![
        reply(400, refusal.clone()),
        reply(400, refusal),
        reply(200, chat_answer("{\"label\": \"bug\"}")),
    ]);
    openai(&server.base, json!({}))
        .complete(&schema_request(), &Cancel::default())
        .unwrap();
    let seen = server.finish();
    assert_eq!(seen.len(), 3);
    assert_eq!(
        seen[2].json()["response_format"],
        json!({"type": "json_object"})
    );
}

#[test]
fn an_error_not_about_response_format_is_not_a_reason_to_fall_back() {
    let server = FakeServer::start(vec![reply(400, json!({"error": {"message": "bad model"}}))]);
    let error = openai(&server.base, json!({}))
        .complete(&schema_request(), &Cancel::default())
        .unwrap_err();
    assert_eq!(error.details()["status"], 400);
    assert_eq!(server.finish().len(), 1);
}

#[test]
fn anthropic_forces_one_tool_whose_input_is_the_answer() {
    let answer = json!({
        "id": "msg_2",
        "type": "message",
        "role": "assistant",
        "content": [{"type": "tool_use", "id": "toolu_1", "name": "classify", "input": {"label": "bug"}}],
        "stop_reason": "tool_use",
        "usage": {"input_tokens": 30, "output_tokens": 6},
    });
    let server = FakeServer::start(vec![reply(200, answer)]);
    let response = anthropic(&server.base, json!({}))
        .complete(&schema_request(), &Cancel::default())
        .unwrap();
    assert_eq!(response.content, "{\"label\":\"bug\"}");
    assert_eq!(
        server.finish()[0].json(),
        json!({
            "model": "claude-test",
            "max_tokens": 256,
            "messages": [{"role": "user", "content": "Classify: crash"}],
            "tools": [{
                "name": "classify",
                "description": "Give the answer as this tool's input.",
                "input_schema": label_schema(),
            }],
            "tool_choice": {"type": "tool", "name": "classify"},
        })
    );
}

#[test]
fn anthropic_sends_the_exact_body_and_headers_and_reads_usage() {
    let answer = json!({
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "content": [{"type": "text", "text": "Short"}, {"type": "text", "text": " answer."}],
        "stop_reason": "end_turn",
        "usage": {"input_tokens": 20, "output_tokens": 4},
    });
    let server = FakeServer::start(vec![reply(200, answer)]);
    let response = anthropic(&server.base, json!({}))
        .complete(&request("Summarize: long text"), &Cancel::default())
        .unwrap();
    assert_eq!(response.content, "Short answer.");
    assert_eq!(response.usage, Some(Usage::new(20, 4)));
    let seen = server.finish();
    assert_eq!(seen[0].path, "/v1/messages");
    assert_eq!(seen[0].header("x-api-key"), Some(KEY));
    assert_eq!(seen[0].header("anthropic-version"), Some("2023-06-01"));
    assert_eq!(seen[0].header("authorization"), None);
    assert_eq!(
        seen[0].body,
        json!({
            "model": "claude-test",
            "max_tokens": 256,
            "system": "You are terse.",
            "messages": [{"role": "user", "content": "Summarize: long text"}],
        })
        .to_string()
    );
}

#[test]
fn retries_429_and_503_after_the_servers_retry_after() {
    let server = FakeServer::start(vec![
        retry_after(429, 1),
        retry_after(503, 1),
        reply(200, chat_answer("finally")),
    ]);
    let started = Instant::now();
    let response = openai(&server.base, json!({"max_retries": 3}))
        .complete(&request("p"), &Cancel::default())
        .unwrap();
    let elapsed = started.elapsed();
    assert_eq!(response.content, "finally");
    assert_eq!(server.finish().len(), 3);
    // A lower bound only: Retry-After was honoured. A loaded machine can only add time.
    assert!(elapsed >= Duration::from_secs(2), "{elapsed:?}");
}

#[test]
fn anthropic_overload_is_retried_too() {
    let answer = json!({"content": [{"type": "text", "text": "ok"}]});
    let server = FakeServer::start(vec![retry_after(529, 0), reply(200, answer)]);
    let response = anthropic(&server.base, json!({}))
        .complete(&request("p"), &Cancel::default())
        .unwrap();
    assert_eq!(response.content, "ok");
    assert_eq!(response.usage, None);
    assert_eq!(server.finish().len(), 2);
}

#[test]
fn retries_are_bounded_and_the_error_has_a_bounded_body() {
    let huge = "x".repeat(10_000);
    let failing = || Reply {
        status: 500,
        body: huge.clone(),
        headers: vec![],
        delay: Duration::ZERO,
    };
    let server = FakeServer::start(vec![failing(), failing()]);
    let error = openai(&server.base, json!({"max_retries": 1}))
        .complete(&request("p"), &Cancel::default())
        .unwrap_err();
    assert_eq!(server.finish().len(), 2);
    assert_eq!(error.kind().code(), "TASK_FAILURE");
    assert_eq!(error.reason(), Some("llm_error"));
    assert_eq!(error.details()["status"], 500);
    assert_eq!(error.details()["attempts"], 2);
    let body = error.details()["body"].as_str().unwrap();
    assert!(
        body.len() <= 2048 && body.starts_with("xxx"),
        "{} bytes",
        body.len()
    );
}

#[test]
fn a_silent_server_hits_the_timeout() {
    let mut slow = reply(200, chat_answer("too late"));
    slow.delay = Duration::from_secs(5);
    let server = FakeServer::start(vec![slow]);
    let error = fails(
        openai(&server.base, json!({"timeout": 0.5, "max_retries": 0})),
        &Cancel::default(),
    );
    assert_eq!(error.reason(), Some("llm_error"));
    assert!(
        error
            .message()
            .contains("no complete answer within 0.500s (the timeout)"),
        "{}",
        error.message()
    );
    assert_eq!(error.details()["status"], Json::Null);
    server.finish();
}

#[test]
fn cancelling_ends_a_call_in_flight() {
    let mut slow = reply(200, chat_answer("too late"));
    slow.delay = Duration::from_secs(5);
    let server = FakeServer::start(vec![slow]);
    let flag = Arc::new(AtomicBool::new(false));
    let cancel = Cancel {
        flag: flag.clone(),
        deadline: None,
    };
    let presser = {
        let flag = flag.clone();
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(200));
            flag.store(true, Ordering::Relaxed);
        })
    };
    let error = fails(openai(&server.base, json!({})), &cancel);
    assert_eq!(error.reason(), Some("execution_halted"));
    presser.join().unwrap();
    server.finish();
}

#[test]
fn a_deadline_ends_the_backoff() {
    let server = FakeServer::start(vec![retry_after(429, 30)]);
    let cancel = Cancel {
        flag: Arc::default(),
        deadline: Some(Instant::now() + Duration::from_millis(300)),
    };
    let error = fails(openai(&server.base, json!({})), &cancel);
    assert_eq!(error.reason(), Some("execution_timeout"));
    server.finish();
}

#[test]
fn malformed_answers_are_llm_errors() {
    let mut not_json = reply(200, json!(null));
    not_json.body = "<html>oops</html>".into();
    let refusal = json!({"choices": [{"message": {"role": "assistant", "content": null, "refusal": "I can't help."}}]});
    let server = FakeServer::start(vec![
        not_json,
        reply(200, json!({"choices": []})),
        reply(200, refusal),
    ]);
    let provider = openai(&server.base, json!({}));
    let error = provider
        .complete(&request("p"), &Cancel::default())
        .unwrap_err();
    assert_eq!(error.reason(), Some("llm_error"));
    assert!(
        error.message().contains("malformed response"),
        "{}",
        error.message()
    );
    assert_eq!(error.details()["status"], 200);
    assert_eq!(error.details()["body"], "<html>oops</html>");
    let error = provider
        .complete(&request("p"), &Cancel::default())
        .unwrap_err();
    assert!(
        error.message().contains("unexpected response"),
        "{}",
        error.message()
    );
    let error = provider
        .complete(&request("p"), &Cancel::default())
        .unwrap_err();
    assert!(
        error.message().contains("the model refused: I can't help."),
        "{}",
        error.message()
    );
    assert_eq!(server.finish().len(), 3);
}

/// A redirect is reported, not followed (streamed or not): a model API does not redirect,
/// and ureq panicked on a redirect whose chunked body ended early.
#[test]
fn a_redirect_is_an_error_that_says_it_was_not_followed() {
    let moved = || {
        let mut answer = reply(307, json!({"error": {"message": "moved"}}));
        let elsewhere = "http://127.0.0.1:9/v1/chat/completions";
        answer.headers.push(("location", elsewhere.into()));
        answer
    };
    let server = FakeServer::start(vec![moved(), moved()]);
    let provider = openai(&server.base, json!({"max_retries": 3}));
    let whole = provider
        .complete(&request("p"), &Cancel::default())
        .unwrap_err();
    let streamed = provider
        .stream(&request("p"), &Cancel::default(), &mut |_| {})
        .unwrap_err();
    assert_eq!(server.finish().len(), 2, "each sent once, not retried");
    for error in [whole, streamed] {
        assert_eq!(error.reason(), Some("llm_error"));
        assert_eq!(error.details()["status"], 307);
        assert!(
            error.message().contains("redirects are not followed"),
            "{}",
            error.message()
        );
    }
}

#[test]
fn a_401_is_not_retried_and_never_shows_the_key() {
    let echoed = json!({"error": {"message": format!("Incorrect API key provided: {KEY}"), "type": "invalid_request_error"}});
    let server = FakeServer::start(vec![reply(401, echoed)]);
    let error = openai(&server.base, json!({"max_retries": 3}))
        .complete(&request("p"), &Cancel::default())
        .unwrap_err();
    assert_eq!(server.finish().len(), 1);
    assert_eq!(error.reason(), Some("llm_error"));
    assert_eq!(error.details()["status"], 401);
    let everything = format!("{} {}", error.message(), error.to_json());
    assert!(!everything.contains(KEY), "{everything}");
    assert!(
        everything.contains("Incorrect API key provided: [REDACTED]"),
        "{everything}"
    );
}

#[test]
fn a_json_escaped_key_is_scrubbed_in_the_message_and_the_body() {
    let escaped = KEY.replace('-', "\\u002d");
    let body = format!(r#"{{"error": {{"message": "Incorrect API key provided: {escaped}"}}}}"#);
    let server = FakeServer::start(vec![Reply {
        body,
        ..reply(401, json!(null))
    }]);
    let error = openai(&server.base, json!({"max_retries": 0}))
        .complete(&request("p"), &Cancel::default())
        .unwrap_err();
    server.finish();
    let everything = format!("{} {}", error.message(), error.to_json());
    assert!(!everything.contains("0123456789abcdef"), "{everything}");
    let body = error.details()["body"].as_str().unwrap().to_owned();
    assert!(
        body.contains("Incorrect API key provided: [REDACTED]"),
        "{body}"
    );
}

#[test]
fn credentials_in_the_base_url_never_appear_in_errors() {
    let server = FakeServer::start(vec![reply(500, json!({"error": {"message": "down"}}))]);
    let base = server.base.replace("http://", "http://alice:hunter2pw@");
    let options = json!({"base_url": format!("{base}/v1"), "model": "m", "max_retries": 0});
    let error = build("openai", &options, &env)
        .unwrap()
        .complete(&request("p"), &Cancel::default())
        .unwrap_err();
    server.finish();
    assert_eq!(error.reason(), Some("llm_error"));
    let everything = format!("{} {}", error.message(), error.to_json());
    assert!(!everything.contains("hunter2pw"), "{everything}");
    assert!(
        everything.contains("http://[REDACTED]@127.0.0.1"),
        "{everything}"
    );
}

#[test]
fn a_key_inside_an_answer_never_reaches_the_cassette() {
    let dir = tempfile::tempdir().unwrap();
    let cassette = dir.path().join("run.jsonl");
    let server = FakeServer::start(vec![reply(200, chat_answer(&format!("your key is {KEY}")))]);
    let options = json!({
        "cassette": cassette.to_str().unwrap(),
        "base_url": format!("{}/v1", server.base),
        "api_key_env": "TEST_API_KEY",
        "model": "gpt-test",
    });
    let record = build("record:openai", &options, &env).unwrap();
    let live = record
        .complete(&request(&format!("repeat {KEY}")), &Cancel::default())
        .unwrap();
    server.finish();
    assert_eq!(live.content, format!("your key is {KEY}"));
    let text = std::fs::read_to_string(&cassette).unwrap();
    assert!(!text.contains(KEY), "{text}");
    assert!(text.contains("your key is [REDACTED]"), "{text}");
}

#[test]
fn a_refused_connection_is_retried_then_reported() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let error = openai(
        &format!("http://127.0.0.1:{port}"),
        json!({"max_retries": 1}),
    )
    .complete(&request("p"), &Cancel::default())
    .unwrap_err();
    assert_eq!(error.reason(), Some("llm_error"));
    assert_eq!(error.details()["status"], Json::Null);
    assert_eq!(error.details()["attempts"], 2);
}

#[test]
fn record_then_replay_gives_the_same_answers_with_the_server_down() {
    let dir = tempfile::tempdir().unwrap();
    let cassette = dir.path().join("run.jsonl");
    let server = FakeServer::start(vec![
        reply(200, chat_answer("one")),
        reply(200, chat_answer("two")),
    ]);
    let base = server.base.clone();
    let record = build(
        "record:openai",
        &json!({
            "cassette": cassette.to_str().unwrap(),
            "base_url": format!("{base}/v1"),
            "api_key_env": "TEST_API_KEY",
            "model": "gpt-test",
        }),
        &env,
    )
    .unwrap();
    let requests = [request("first"), request("second")];
    let live: Vec<_> = requests
        .iter()
        .map(|r| record.complete(r, &Cancel::default()).unwrap())
        .collect();
    assert_eq!(server.finish().len(), 2);
    let text = std::fs::read_to_string(&cassette).unwrap();
    assert_eq!(text.lines().count(), 2);
    assert!(!text.contains(KEY));

    let down = openai(&base, json!({"max_retries": 0}))
        .complete(&request("first"), &Cancel::default())
        .unwrap_err();
    assert_eq!(down.reason(), Some("llm_error"));

    let replay = build(
        "replay",
        &json!({"cassette": cassette.to_str().unwrap()}),
        &env,
    )
    .unwrap();
    for (r, expected) in requests.iter().zip(&live) {
        let replayed = replay.complete(r, &Cancel::default()).unwrap();
        assert_eq!(replayed.content, expected.content);
        assert_eq!(replayed.usage, expected.usage);
    }
    let missing = replay
        .complete(&request("third"), &Cancel::default())
        .unwrap_err();
    assert_eq!(missing.reason(), Some("llm_error"));
}

#[test]
fn from_settings_uses_the_flags_and_sends_no_key_to_a_local_server() {
    let server = FakeServer::start(vec![reply(200, chat_answer("local"))]);
    let settings = tasklisp::internals::provider::ProviderSettings {
        provider: Some("ollama".into()),
        model: Some("llama-test".into()),
        base_url: Some(format!("{}/v1", server.base)),
        ..Default::default()
    };
    let provider = tasklisp::internals::provider::from_settings(&settings).unwrap();
    assert_eq!(provider.name(), "ollama");
    let response = provider
        .complete(&request("p"), &Cancel::default())
        .unwrap();
    assert_eq!(response.content, "local");
    let seen = server.finish();
    assert_eq!(seen[0].header("authorization"), None);
    assert_eq!(seen[0].json()["model"], "llama-test");
}

#[test]
fn from_language_builds_from_an_options_map() {
    let server = FakeServer::start(vec![reply(200, chat_answer("mapped"))]);
    let options = json!({
        "base_url": format!("{}/v1", server.base),
        "model": "m",
        "max_retries": 0,
    });
    let provider =
        tasklisp::internals::provider::from_language("openai", &options, &Capabilities::all())
            .unwrap();
    let response = provider
        .complete(&request("p"), &Cancel::default())
        .unwrap();
    assert_eq!(response.content, "mapped");
    server.finish();
    let error = tasklisp::internals::provider::from_language(
        "openai",
        &json!({"api_key": KEY}),
        &Capabilities::all(),
    )
    .err()
    .unwrap();
    assert_eq!(error.kind().code(), "VALIDATION_ERROR");
    assert!(!error.message().contains(KEY));
}

/// Runs `program` with the binary against the fake OpenAI-compatible server.
fn run_with_openai(server: &FakeServer, flags: &[&str], program: &str) -> String {
    run_with("openai", &format!("{}/v1", server.base), flags, program)
}

/// Runs `program` with the binary, `provider` at `base_url`, and no keys.
fn run_with(provider: &str, base_url: &str, flags: &[&str], program: &str) -> String {
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_tasklisp"))
        .env_clear()
        .args(["--provider", provider, "--base-url", base_url])
        .args(flags)
        .args(["eval", program])
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

#[test]
fn options_layer_from_flag_to_task_in_the_exact_body() {
    let server = FakeServer::start(vec![
        reply(200, chat_answer("one")),
        reply(200, chat_answer("two")),
    ]);
    let program = r#"
        (deftask ask (q) :system "Be brief." :prompt "Q: {{q}}" :temperature 0 :max-tokens 20)
        (ask "why?")
        (with-provider (get-provider) :top-p 0.5 :max_tokens 9 (ask "how?"))"#;
    let program = program.replace(
        "(get-provider)",
        &format!(
            r#"{{"provider" "openai" "base_url" "{}/v1" "model" "scoped"}}"#,
            server.base
        ),
    );
    run_with_openai(
        &server,
        &[
            "-m",
            "flag-model",
            "-o",
            "seed",
            "3",
            "-o",
            "temperature",
            "1",
        ],
        &program,
    );
    let seen = server.finish();
    assert_eq!(
        seen[0].body,
        r#"{"model":"flag-model","messages":[{"role":"system","content":"Be brief."},{"role":"user","content":"Q: why?"}],"temperature":0,"max_tokens":20,"seed":3,"prompt_cache_key":"ask"}"#
    );
    assert_eq!(
        seen[1].body,
        r#"{"model":"scoped","messages":[{"role":"system","content":"Be brief."},{"role":"user","content":"Q: how?"}],"temperature":0,"max_tokens":20,"top_p":0.5,"seed":3,"prompt_cache_key":"ask"}"#
    );
}

#[test]
fn a_conversation_sends_every_message_so_far() {
    let server = FakeServer::start(vec![
        reply(200, chat_answer("Hello.")),
        reply(200, chat_answer("Fine.")),
    ]);
    let program = r#"
        (define c (conversation :system "You are terse." :model "chat-model" :temperature 0))
        (define r (chat c "Hi"))
        (chat r.conversation "How are you?")"#;
    let out = run_with_openai(&server, &[], program);
    assert!(out.contains(r#""content" "Fine.""#), "{out}");
    let seen = server.finish();
    assert_eq!(
        seen[1].body,
        r#"{"model":"chat-model","messages":[{"role":"system","content":"You are terse."},{"role":"user","content":"Hi"},{"role":"assistant","content":"Hello."},{"role":"user","content":"How are you?"}],"temperature":0,"prompt_cache_key":"chat"}"#
    );
}

/// The re-asking program both wire-format tests run: a schema, one retry.
const REASK_PROGRAM: &str = r#"
    (deftask label (text) :system "Label reports." :prompt "Label: {{text}}" :retries 1
      :schema {"type" "object" "properties" {"label" {"type" "string"}} "required" ["label"]})
    (define r (label "crash"))
    [r.parsedContent.label r.notes.rounds]"#;

/// The user message of the second round, after an answer whose `label` is a number.
const REASK_PROBLEMS: &str = r#"Your answer has these problems:\n- /label: 5 is not of type \"string\"\nAnswer again, with every problem fixed."#;

#[test]
fn openai_reasks_with_the_answer_and_its_problems_as_messages() {
    let server = FakeServer::start(vec![
        reply(200, chat_answer("{\"label\": 5}")),
        reply(200, chat_answer("{\"label\": \"bug\"}")),
    ]);
    let out = run_with_openai(&server, &["-m", "m"], REASK_PROGRAM);
    assert_eq!(out.trim(), r#"("bug" 2)"#);
    let seen = server.finish();
    let format = r#""response_format":{"type":"json_schema","json_schema":{"name":"label","schema":{"type":"object","properties":{"label":{"type":"string"}},"required":["label"]},"strict":false}}"#;
    assert_eq!(
        seen[1].body,
        format!(
            r#"{{"model":"m","messages":[{{"role":"system","content":"Label reports."}},{{"role":"user","content":"Label: crash"}},{{"role":"assistant","content":"{{\"label\": 5}}"}},{{"role":"user","content":"{REASK_PROBLEMS}"}}],{format},"prompt_cache_key":"label"}}"#
        )
    );
}

#[test]
fn anthropic_reasks_with_the_answer_and_its_problems_as_messages() {
    let answer = |label: Json| {
        json!({
            "id": "msg_1", "type": "message", "role": "assistant", "stop_reason": "tool_use",
            "content": [{"type": "tool_use", "id": "toolu_1", "name": "label", "input": {"label": label}}],
        })
    };
    let server = FakeServer::start(vec![
        reply(200, answer(json!(5))),
        reply(200, answer(json!("bug"))),
    ]);
    let out = run_with(
        "anthropic",
        &server.base,
        &["-m", "claude-m"],
        REASK_PROGRAM,
    );
    assert_eq!(out.trim(), r#"("bug" 2)"#);
    let seen = server.finish();
    let tools = r#""tools":[{"name":"label","description":"Give the answer as this tool's input.","input_schema":{"type":"object","properties":{"label":{"type":"string"}},"required":["label"]}}],"tool_choice":{"type":"tool","name":"label"}"#;
    assert_eq!(
        seen[1].body,
        format!(
            r#"{{"model":"claude-m","max_tokens":4096,"system":"Label reports.","messages":[{{"role":"user","content":"Label: crash"}},{{"role":"assistant","content":"{{\"label\":5}}"}},{{"role":"user","content":"{REASK_PROBLEMS}"}}],{tools}}}"#
        )
    );
}

/// The tools program both wire-format tests run: one tool, one call, one answer.
const TOOL_PROGRAM: &str = r#"
    (deftask add (a b) :description "Add" :param-types {"a" "integer" "b" "integer"} (+ a b))
    (deftask calc (q) :prompt "{{q}}" :tools [add])
    (define r (calc "2+3?"))
    [r.content r.notes.toolCalls]"#;

#[test]
fn openai_tool_calls_go_round_the_loop_in_the_function_format() {
    // Shaped as llama-cpp-python (0.3, chatml-function-calling) answers: the legacy
    // `function_call` beside `tool_calls`, and `logprobs`.
    let asks = json!({
        "id": "chatcmpl-1", "object": "chat.completion",
        "choices": [{"index": 0, "logprobs": null, "finish_reason": "tool_calls", "message": {
            "role": "assistant", "content": null,
            "tool_calls": [{"id": "call_9", "type": "function",
                            "function": {"name": "add", "arguments": "{\"a\": 2, \"b\": 3}"}}],
            "function_call": {"name": "add", "arguments": "{\"a\": 2, \"b\": 3}"},
        }}],
        "usage": {"prompt_tokens": 27, "completion_tokens": 12, "total_tokens": 39},
    });
    let server = FakeServer::start(vec![reply(200, asks), reply(200, chat_answer("5"))]);
    let out = run_with_openai(&server, &["-m", "m"], TOOL_PROGRAM);
    assert_eq!(
        out.trim(),
        r#"("5" ({"name" "add" "arguments" {"a" 2 "b" 3} "result" 5}))"#
    );
    let seen = server.finish();
    let tools = r#""tools":[{"type":"function","function":{"name":"add","description":"Add","parameters":{"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"integer"}},"required":["a","b"],"additionalProperties":false}}}]"#;
    assert_eq!(
        seen[0].body,
        format!(
            r#"{{"model":"m","messages":[{{"role":"user","content":"2+3?"}}],{tools},"prompt_cache_key":"calc"}}"#
        )
    );
    assert_eq!(
        seen[1].body,
        format!(
            r#"{{"model":"m","messages":[{{"role":"user","content":"2+3?"}},{{"role":"assistant","content":"","tool_calls":[{{"id":"call_9","type":"function","function":{{"name":"add","arguments":"{{\"a\":2,\"b\":3}}"}}}}]}},{{"role":"tool","content":"5","tool_call_id":"call_9"}}],{tools},"prompt_cache_key":"calc"}}"#
        )
    );
}

#[test]
fn anthropic_tool_use_goes_round_the_loop_with_tool_results() {
    let asks = json!({
        "id": "msg_1", "type": "message", "role": "assistant", "stop_reason": "tool_use",
        "content": [
            {"type": "text", "text": "Adding."},
            {"type": "tool_use", "id": "toolu_1", "name": "add", "input": {"a": 2, "b": 3}},
        ],
    });
    let done = json!({
        "id": "msg_2", "type": "message", "role": "assistant", "stop_reason": "end_turn",
        "content": [{"type": "text", "text": "5"}],
    });
    let server = FakeServer::start(vec![reply(200, asks), reply(200, done)]);
    let out = run_with("anthropic", &server.base, &["-m", "claude-m"], TOOL_PROGRAM);
    assert_eq!(
        out.trim(),
        r#"("5" ({"name" "add" "arguments" {"a" 2 "b" 3} "result" 5}))"#
    );
    let seen = server.finish();
    let tools = r#""tools":[{"name":"add","description":"Add","input_schema":{"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"integer"}},"required":["a","b"],"additionalProperties":false}}]"#;
    assert_eq!(
        seen[1].body,
        format!(
            r#"{{"model":"claude-m","max_tokens":4096,"messages":[{{"role":"user","content":"2+3?"}},{{"role":"assistant","content":[{{"type":"text","text":"Adding."}},{{"type":"tool_use","id":"toolu_1","name":"add","input":{{"a":2,"b":3}}}}]}},{{"role":"user","content":[{{"type":"tool_result","tool_use_id":"toolu_1","content":"5"}}]}}],{tools}}}"#
        )
    );
}

#[test]
fn a_tool_exchange_is_recorded_and_replayed_offline() {
    let asks = json!({
        "choices": [{"index": 0, "message": {
            "role": "assistant", "content": null,
            "tool_calls": [{"id": "call_1", "type": "function",
                            "function": {"name": "add", "arguments": "{\"a\": 2, \"b\": 3}"}}],
        }}],
    });
    let server = FakeServer::start(vec![reply(200, asks), reply(200, chat_answer("5"))]);
    let dir = tempfile::tempdir().unwrap();
    let cassette = dir.path().join("tools.jsonl");
    let program = TOOL_PROGRAM.replace(
        "(define r",
        &format!(
            r#"(set-provider! :record {{"cassette" {:?} "provider" "openai" "base_url" "{}/v1" "model" "m"}})
               (define r"#,
            cassette.to_str().unwrap(),
            server.base
        ),
    );
    let live = run_with_openai(&server, &[], &program);
    server.finish();
    let replayed_program = TOOL_PROGRAM.replace(
        "(define r",
        &format!(
            r#"(set-provider! :replay {{"cassette" {:?}}})
               (define r"#,
            cassette.to_str().unwrap()
        ),
    );
    // The server is gone: only the cassette can answer.
    let replayed = run_with("openai", "http://127.0.0.1:9/v1", &[], &replayed_program);
    assert_eq!(live, replayed);
    let lines = std::fs::read_to_string(&cassette).unwrap();
    assert_eq!(lines.lines().count(), 2);
    assert!(
        lines.contains(r#""tool_calls":[{"arguments":{"a":2,"b":3},"id":"call_1","name":"add"}]"#)
            || lines.contains(
                r#""tool_calls":[{"id":"call_1","name":"add","arguments":{"a":2,"b":3}}]"#
            ),
        "{lines}"
    );
}

#[test]
fn a_fallback_takes_over_after_a_5xx_but_not_after_a_400() {
    let down = FakeServer::start(vec![reply(503, json!({"error": "overloaded"}))]);
    let up = FakeServer::start(vec![reply(200, chat_answer("from the second"))]);
    let chain = format!(
        r#"[{{"provider" "openai" "base_url" "{}/v1" "model" "a" "max_retries" 0}}
           {{"provider" "openai" "base_url" "{}/v1" "model" "b"}}]"#,
        down.base, up.base
    );
    let program = format!(
        r#"(deftask ask (q) :prompt "{{{{q}}}}")
           (with-fallback {chain} (define r (ask "hi")) [r.content r.notes.provider r.notes.fallbacks])"#
    );
    let out = run_with_openai(&up, &[], &program);
    assert!(
        out.starts_with(r#"("from the second" "openai" ({"provider" "openai" "error" "openai: "#),
        "{out}"
    );
    assert_eq!(down.finish().len(), 1);
    assert_eq!(up.finish()[0].json()["model"], "b");

    let refused = FakeServer::start(vec![reply(400, json!({"error": "bad request"}))]);
    let unused = FakeServer::start(vec![]);
    let chain = format!(
        r#"[{{"provider" "openai" "base_url" "{}/v1" "model" "a" "max_retries" 0}}
           {{"provider" "openai" "base_url" "{}/v1" "model" "b"}}]"#,
        refused.base, unused.base
    );
    let program = format!(
        r#"(deftask ask (q) :prompt "{{{{q}}}}")
           (with-fallback {chain} (try (ask "hi") (catch e e.details.status)))"#
    );
    assert_eq!(run_with_openai(&unused, &[], &program).trim(), "400");
    assert_eq!(refused.finish().len(), 1);
    assert!(unused.finish().is_empty());
}

#[test]
fn a_rate_limit_paces_pmap_items_at_the_server() {
    let replies = (0..4).map(|_| reply(200, chat_answer("ok"))).collect();
    let server = FakeServer::start(replies);
    let program = format!(
        r#"(set-provider! {{"provider" "openai" "base_url" "{}/v1" "model" "m"}}
                          :rate-limit {{"requests_per_minute" 60}})
           (deftask ask (q) :prompt "{{{{q}}}}")
           (length (pmap (fn (i) (ask (str i))) (range 4)))"#,
        server.base
    );
    assert_eq!(run_with_openai(&server, &[], &program).trim(), "4");
    let seen = server.finish();
    // 60 a minute is one a second: three requests span two seconds, so no one-second
    // window holds more than two even if their trips to the server vary by a second.
    // Without the limit all four arrive at once. (A slow machine only spreads them.)
    let most_in_a_second = seen
        .iter()
        .map(|first| {
            seen.iter()
                .filter(|other| {
                    other.at >= first.at && other.at < first.at + Duration::from_secs(1)
                })
                .count()
        })
        .max()
        .unwrap();
    assert!(
        most_in_a_second <= 2,
        "{:?}",
        seen.iter().map(|s| s.at).collect::<Vec<_>>()
    );
}

#[test]
fn openai_streams_pieces_and_builds_the_same_answer() {
    let delta = |text: &str| json!({"choices": [{"index": 0, "delta": {"content": text}, "finish_reason": null}]});
    let server = FakeServer::start(vec![
        events_reply(
            &[
                delta("Sho"),
                delta("rt."),
                json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}),
                json!({"choices": [], "usage": {"prompt_tokens": 12, "completion_tokens": 3}}),
            ],
            "data: [DONE]\n\n",
        ),
        reply(200, chat_answer("Short.")),
    ]);
    let provider = openai(&server.base, json!({}));
    let mut pieces = Vec::new();
    let streamed = provider
        .stream(&request("Summarize"), &Cancel::default(), &mut |t| {
            pieces.push(t.to_owned())
        })
        .unwrap();
    let whole = provider
        .complete(&request("Summarize"), &Cancel::default())
        .unwrap();
    assert_eq!(pieces, ["Sho", "rt."]);
    assert_eq!(
        (streamed.content, streamed.usage),
        (whole.content, whole.usage)
    );
    let seen = server.finish();
    assert_eq!(seen[0].header("accept"), Some("text/event-stream"));
    assert_eq!(
        seen[0].body,
        json!({
            "model": "gpt-test",
            "messages": [
                {"role": "system", "content": "You are terse."},
                {"role": "user", "content": "Summarize"},
            ],
            "stream": true,
            "stream_options": {"include_usage": true},
        })
        .to_string()
    );
}

#[test]
fn anthropic_streams_text_deltas_with_the_usage_of_start_and_delta() {
    let server = FakeServer::start(vec![events_reply(
        &[
            json!({"type": "message_start", "message": {"id": "msg_1", "type": "message", "role": "assistant",
                   "content": [], "model": "claude-test", "stop_reason": null,
                   "usage": {"input_tokens": 9, "output_tokens": 1}}}),
            json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
            json!({"type": "ping"}),
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Hi"}}),
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": " there"}}),
            json!({"type": "content_block_stop", "index": 0}),
            json!({"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 4}}),
            json!({"type": "message_stop"}),
        ],
        "",
    )]);
    let mut pieces = String::new();
    let response = anthropic(&server.base, json!({}))
        .stream(&request("Greet"), &Cancel::default(), &mut |t| {
            pieces.push_str(t);
            pieces.push('|');
        })
        .unwrap();
    assert_eq!(pieces, "Hi| there|");
    assert_eq!(response.content, "Hi there");
    assert_eq!(response.usage, Some(Usage::new(9, 4)));
    let body = server.finish()[0].json();
    assert_eq!(body["stream"], true);
    assert_eq!(body["system"], "You are terse.");
}

#[test]
fn a_stream_cut_short_or_carrying_an_error_fails_cleanly() {
    let delta =
        json!({"choices": [{"index": 0, "delta": {"content": "Par"}, "finish_reason": null}]});
    let server = FakeServer::start(vec![
        events_reply(&[delta], ""),
        events_reply(&[json!({"error": {"message": "overloaded"}})], ""),
    ]);
    let provider = openai(&server.base, json!({}));
    let cut = provider
        .stream(&request("p"), &Cancel::default(), &mut |_| {})
        .unwrap_err();
    assert!(
        cut.to_string()
            .contains("ended before the answer was complete"),
        "{cut}"
    );
    let error = provider
        .stream(&request("p"), &Cancel::default(), &mut |_| {})
        .unwrap_err();
    assert_eq!(error.reason(), Some("llm_error"));
    assert!(error.to_string().contains("overloaded"), "{error}");
    server.finish();
}

/// A `message_start` whose message is not an object once panicked when the stream ended
/// (setting the content of a string) or a `message_delta` came (setting its stop reason).
#[test]
fn an_anthropic_stream_starting_with_a_message_not_an_object_fails_cleanly() {
    let start = |message: Json| json!({"type": "message_start", "message": message});
    let delta = json!({"type": "message_delta", "delta": {"stop_reason": "end_turn"}});
    let stop = json!({"type": "message_stop"});
    let server = FakeServer::start(vec![
        events_reply(&[start(json!("msg")), stop.clone()], ""),
        events_reply(&[start(json!([1])), delta, stop], ""),
    ]);
    let provider = anthropic(&server.base, json!({}));
    for _ in 0..2 {
        let error = provider
            .stream(&request("p"), &Cancel::default(), &mut |_| {})
            .unwrap_err();
        assert_eq!(error.reason(), Some("llm_error"));
        assert!(
            error
                .to_string()
                .contains("a streamed message_start whose message is not an object"),
            "{error}"
        );
    }
    server.finish();
}

#[test]
fn an_error_inside_a_stream_never_shows_the_key() {
    let echoed = format!("Incorrect API key provided: {KEY}");
    let server = FakeServer::start(vec![events_reply(
        &[json!({"error": {"message": echoed, "key": KEY}})],
        "",
    )]);
    let error = openai(&server.base, json!({}))
        .stream(&request("p"), &Cancel::default(), &mut |_| {})
        .unwrap_err();
    let everything = format!("{error} {}", error.to_json());
    assert!(!everything.contains(KEY), "{everything}");
    assert!(
        everything.contains("Incorrect API key provided: [REDACTED]"),
        "{everything}"
    );
    server.finish();
}

/// A tool call is not text to show: a request offering tools goes out whole (no
/// `stream`), and the sink gets the whole answer.
#[test]
fn a_request_offering_tools_is_not_streamed() {
    let server = FakeServer::start(vec![reply(200, chat_answer("No tool needed."))]);
    let offering = Request {
        tools: vec![tasklisp::ToolSpec {
            name: "lookup".into(),
            description: "Looks a word up.".into(),
            parameters: json!({"type": "object", "properties": {}}),
        }],
        ..request("Define tasklisp")
    };
    let mut shown = String::new();
    let response = openai(&server.base, json!({}))
        .stream(&offering, &Cancel::default(), &mut |t| shown.push_str(t))
        .unwrap();
    assert_eq!(
        (shown.as_str(), response.content.as_str()),
        ("No tool needed.", "No tool needed.")
    );
    let body = server.finish()[0].json();
    assert_eq!(body.get("stream"), None);
    assert_eq!(body["tools"][0]["function"]["name"], "lookup");
}

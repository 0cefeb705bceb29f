//! Prompt caching against fake OpenAI and Anthropic servers, through the binary: the
//! exact bodies (`prompt_cache_key`, `cache_control`), streamed and not; the cached
//! tokens the servers report in `notes.usage`, priced at the discount, in the run log
//! and in `tasklisp log`.

#![cfg(unix)]

#[path = "common/fake_server.rs"]
mod fake_server;

use fake_server::{events_reply, reply, FakeServer};
use serde_json::{json, Value as Json};
use std::path::Path;

/// A system prompt long enough to be cached (about 1100 tokens by four bytes each).
fn long_system() -> String {
    "Answer in one line. ".repeat(220)
}

/// Runs `args` with the log at `dir/log.db` and no keys; gives stdout, after checking
/// the run succeeded.
fn tasklisp(dir: &Path, args: &[&str]) -> String {
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_tasklisp"))
        .env_clear()
        .env("TASKLISP_LOG", dir.join("log.db"))
        .args(args)
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// The first line `eval` printed (the value it prints last is `println`'s nil).
fn first_line(out: &str) -> &str {
    out.lines().next().unwrap_or_default()
}

/// `tasklisp log` of the latest run: its call tree.
fn latest_call_tree(dir: &Path) -> String {
    let runs = tasklisp(dir, &["log"]);
    let id = runs
        .lines()
        .nth(1)
        .and_then(|line| line.split_whitespace().next())
        .expect("a run");
    tasklisp(dir, &["log", id])
}

/// The program: a task with the long system prompt, its answer's usage and cost printed.
fn program(options: &str) -> String {
    format!(
        r#"(deftask summarize (text) :system "{}" :prompt "Summarize: {{{{text}}}}"{options})
           (define r (summarize "cats"))
           (println (json-stringify r.notes.usage) r.notes.cost)"#,
        long_system()
    )
}

fn openai_answer() -> Json {
    json!({
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "Cats."}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 2000, "completion_tokens": 10,
                  "prompt_tokens_details": {"cached_tokens": 1920}},
    })
}

#[test]
fn openai_gets_the_task_name_as_prompt_cache_key_and_cached_tokens_are_discounted() {
    let dir = tempfile::tempdir().unwrap();
    let server = FakeServer::start(vec![reply(200, openai_answer())]);
    let base = format!("{}/v1", server.base);
    let flags = ["--provider", "openai", "--base-url", &base, "-m", "gpt-4o"];
    let out = tasklisp(dir.path(), &[&flags[..], &["eval", &program("")]].concat());
    let body = server.finish()[0].json();
    assert_eq!(
        body,
        json!({"model": "gpt-4o", "messages": [
            {"role": "system", "content": long_system()},
            {"role": "user", "content": "Summarize: cats"}],
            "prompt_cache_key": "summarize"})
    );
    // 80 input tokens at $2.50, 1920 cached at $1.25, 10 output at $10 per million.
    assert_eq!(
        first_line(&out),
        r#"{"input_tokens":2000,"output_tokens":10,"cached_input_tokens":1920} 0.0027"#
    );
    let tree = latest_call_tree(dir.path());
    assert!(
        tree.contains("2000+10 tokens  $0.0027") && tree.contains("(1920 cached)"),
        "{tree}"
    );
}

#[test]
fn prompt_cache_key_and_cache_prefix_options_choose_the_key_or_turn_it_off() {
    let dir = tempfile::tempdir().unwrap();
    let server = FakeServer::start(vec![
        reply(200, openai_answer()),
        reply(200, openai_answer()),
    ]);
    let base = format!("{}/v1", server.base);
    let flags = ["--provider", "openai", "--base-url", &base, "-m", "gpt-4o"];
    let keyed = program(r#" :prompt-cache-key "tenant-7""#);
    tasklisp(dir.path(), &[&flags[..], &["eval", &keyed]].concat());
    let off = program(" :cache-prefix false");
    tasklisp(dir.path(), &[&flags[..], &["eval", &off]].concat());
    let seen = server.finish();
    assert_eq!(seen[0].json()["prompt_cache_key"], "tenant-7");
    assert_eq!(seen[1].json().get("prompt_cache_key"), None);
}

#[test]
fn openai_streamed_answers_report_cached_tokens_too() {
    let dir = tempfile::tempdir().unwrap();
    let server = FakeServer::start(vec![events_reply(
        &[
            json!({"choices": [{"index": 0, "delta": {"content": "Cats."}, "finish_reason": "stop"}]}),
            json!({"choices": [], "usage": openai_answer()["usage"]}),
        ],
        "data: [DONE]\n\n",
    )]);
    let base = format!("{}/v1", server.base);
    let flags = ["--provider", "openai", "--base-url", &base, "-m", "gpt-4o"];
    let program = program("");
    let args = [&flags[..], &["--stream", "eval", &program]].concat();
    let out = tasklisp(dir.path(), &args);
    let body = server.finish()[0].json();
    assert_eq!(body["prompt_cache_key"], "summarize");
    assert_eq!(body["stream"], true);
    assert!(
        out.contains(r#""cached_input_tokens":1920} 0.0027"#),
        "{out}"
    );
}

/// The Messages body of the long-system program: the system prompt as one text block
/// marked for caching.
fn marked_anthropic_body() -> Json {
    json!({"model": "claude-sonnet-4-5", "max_tokens": 4096,
        "system": [{"type": "text", "text": long_system(), "cache_control": {"type": "ephemeral"}}],
        "messages": [{"role": "user", "content": "Summarize: cats"}]})
}

fn anthropic_usage() -> Json {
    json!({"input_tokens": 20, "output_tokens": 10,
           "cache_read_input_tokens": 1000, "cache_creation_input_tokens": 100})
}

/// Sonnet 4.5: 20 plain input tokens at $3, 1000 read at $0.30, 100 written at $3.75,
/// 10 output at $15 per million.
const ANTHROPIC_COST: &str = "0.000885";

#[test]
fn anthropic_marks_a_long_system_prompt_and_prices_cache_reads_and_writes() {
    let dir = tempfile::tempdir().unwrap();
    let answer = json!({"content": [{"type": "text", "text": "Cats."}],
                        "stop_reason": "end_turn", "usage": anthropic_usage()});
    let server = FakeServer::start(vec![reply(200, answer)]);
    let flags = ["--provider", "anthropic", "--base-url", &server.base];
    let program = program("");
    let args = [&flags[..], &["-m", "claude-sonnet-4-5", "eval", &program]].concat();
    let out = tasklisp(dir.path(), &args);
    assert_eq!(server.finish()[0].json(), marked_anthropic_body());
    assert_eq!(
        first_line(&out),
        format!(
            r#"{{"input_tokens":1120,"output_tokens":10,"cached_input_tokens":1000,"cache_write_tokens":100}} {ANTHROPIC_COST}"#
        )
    );
    let tree = latest_call_tree(dir.path());
    assert!(tree.contains("(1000 cached, 100 written)"), "{tree}");
}

#[test]
fn anthropic_streamed_answers_count_cache_tokens_and_cache_prefix_false_unmarks() {
    let dir = tempfile::tempdir().unwrap();
    let start = json!({"type": "message_start", "message": {"role": "assistant",
        "content": [], "usage": anthropic_usage()}});
    let text = json!({"type": "content_block_delta", "index": 0,
        "delta": {"type": "text_delta", "text": "Cats."}});
    let delta = json!({"type": "message_delta", "delta": {"stop_reason": "end_turn"},
        "usage": {"output_tokens": 10}});
    let stop = json!({"type": "message_stop"});
    let stream = || {
        events_reply(
            &[start.clone(), text.clone(), delta.clone(), stop.clone()],
            "",
        )
    };
    let server = FakeServer::start(vec![stream(), stream()]);
    let flags = ["--provider", "anthropic", "--base-url", &server.base];
    let flags = [&flags[..], &["-m", "claude-sonnet-4-5", "--stream", "eval"]].concat();
    let out = tasklisp(dir.path(), &[&flags[..], &[program("").as_str()]].concat());
    assert!(first_line(&out).ends_with(ANTHROPIC_COST), "{out}");
    let off = program(" :cache-prefix false");
    tasklisp(dir.path(), &[&flags[..], &[off.as_str()]].concat());
    let seen = server.finish();
    let mut streamed = marked_anthropic_body();
    streamed["stream"] = json!(true);
    assert_eq!(seen[0].json(), streamed);
    assert_eq!(seen[1].json()["system"], json!(long_system()));
}

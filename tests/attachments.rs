//! Attachments through the binary against fake OpenAI and Anthropic servers: images,
//! PDFs and audio as each provider's content parts (exact bodies, streamed and not),
//! the checks made before anything is sent (size, type, a missing file, `--sandbox`),
//! and the run log holding an attachment's digest, never its bytes.

#![cfg(unix)]

#[path = "common/fake_server.rs"]
mod fake_server;

use fake_server::{events_reply, reply, FakeServer};
use serde_json::{json, Value as Json};
use std::path::Path;
use std::process::Output;

/// Bytes no other part of a request or a log could hold by chance.
const PNG: &[u8] = b"\x89PNG-attachment-bytes-7f3a9c";
const PDF: &[u8] = b"%PDF-1.4 attachment-bytes-51be";
const WAV: &[u8] = b"RIFF-attachment-bytes-0c2d";

fn base64(bytes: &[u8]) -> String {
    // The three files above, as the provider's base64 (checked against `base64 -w0`).
    match bytes {
        PNG => "iVBORy1hdHRhY2htZW50LWJ5dGVzLTdmM2E5Yw==".into(),
        PDF => "JVBERi0xLjQgYXR0YWNobWVudC1ieXRlcy01MWJl".into(),
        WAV => "UklGRi1hdHRhY2htZW50LWJ5dGVzLTBjMmQ=".into(),
        _ => unreachable!(),
    }
}

/// A directory holding `cat.png`, `doc.pdf` and `a.wav`.
fn files() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (name, bytes) in [("cat.png", PNG), ("doc.pdf", PDF), ("a.wav", WAV)] {
        std::fs::write(dir.path().join(name), bytes).unwrap();
    }
    dir
}

/// Runs `args` in `dir` with the log at `dir/log.db` and no keys.
fn tasklisp(dir: &Path, args: &[&str]) -> Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_tasklisp"))
        .env_clear()
        .env("TASKLISP_LOG", dir.join("log.db"))
        .current_dir(dir)
        .args(args)
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap()
}

/// The flags that send to `base` with `model`.
fn provider<'a>(name: &'a str, base: &'a str, model: &'a str) -> [&'a str; 6] {
    ["--provider", name, "--base-url", base, "-m", model]
}

fn succeeds(output: &Output) -> String {
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn fails(output: &Output) -> String {
    assert!(!output.status.success(), "succeeded");
    String::from_utf8_lossy(&output.stderr).into_owned()
}

fn chat_answer() -> Json {
    json!({"choices": [{"index": 0, "message": {"role": "assistant", "content": "A cat."},
           "finish_reason": "stop"}], "usage": {"prompt_tokens": 9, "completion_tokens": 3}})
}

/// The user message's content parts chat completions are sent for the three files.
fn openai_parts(text: &str) -> Json {
    json!([
        {"type": "text", "text": text},
        {"type": "image_url", "image_url": {"url": format!("data:image/png;base64,{}", base64(PNG))}},
        {"type": "file", "file": {"filename": "doc.pdf",
            "file_data": format!("data:application/pdf;base64,{}", base64(PDF))}},
        {"type": "input_audio", "input_audio": {"data": base64(WAV), "format": "wav"}},
    ])
}

const DESCRIBE: &str = r#"(deftask describe (picture) :prompt "Describe them."
                             :attachments [(attachment picture) "doc.pdf" "a.wav"])
                           (println (get (describe "cat.png") "content"))"#;

#[test]
fn openai_gets_images_pdfs_and_audio_as_content_parts_streamed_or_not() {
    let dir = files();
    let stream = events_reply(
        &[
            json!({"choices": [{"index": 0, "delta": {"content": "A cat."}, "finish_reason": "stop"}]}),
        ],
        "data: [DONE]\n\n",
    );
    let server = FakeServer::start(vec![reply(200, chat_answer()), stream]);
    let base = format!("{}/v1", server.base);
    let flags = provider("openai", &base, "gpt-4o");
    let out = succeeds(&tasklisp(
        dir.path(),
        &[&flags[..], &["eval", DESCRIBE]].concat(),
    ));
    assert_eq!(out.lines().next(), Some("A cat."));
    let prompt = [
        "prompt",
        "-a",
        "cat.png",
        "-a",
        "doc.pdf",
        "--attachment",
        "a.wav",
    ];
    let out = succeeds(&tasklisp(
        dir.path(),
        &[&flags[..], &prompt, &["What is this?"]].concat(),
    ));
    assert_eq!(out.trim(), "A cat.");
    let seen = server.finish();
    assert_eq!(
        seen[0].json(),
        json!({"model": "gpt-4o", "messages": [{"role": "user", "content": openai_parts("Describe them.")}],
               "prompt_cache_key": "describe"})
    );
    assert_eq!(
        seen[1].json(),
        json!({"model": "gpt-4o", "messages": [{"role": "user", "content": openai_parts("What is this?")}],
               "prompt_cache_key": "prompt", "stream": true, "stream_options": {"include_usage": true}})
    );
}

#[test]
fn anthropic_gets_image_and_document_blocks_before_the_text_streamed_or_not() {
    let dir = files();
    let answer = json!({"content": [{"type": "text", "text": "A cat."}], "stop_reason": "end_turn",
                        "usage": {"input_tokens": 9, "output_tokens": 3}});
    let stream = events_reply(
        &[
            json!({"type": "message_start", "message": {"role": "assistant", "content": [],
                   "usage": {"input_tokens": 9, "output_tokens": 0}}}),
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "A cat."}}),
            json!({"type": "message_stop"}),
        ],
        "",
    );
    let server = FakeServer::start(vec![reply(200, answer), stream]);
    let flags = provider("anthropic", &server.base, "claude-x");
    let program = r#"(deftask look () :prompt "Look." :attachments ["cat.png" "https://x.io/doc.pdf"])
                     (println (get (look) "content"))"#;
    succeeds(&tasklisp(
        dir.path(),
        &[&flags[..], &["eval", program]].concat(),
    ));
    let prompt = ["prompt", "-a", "cat.png", "-a", "doc.pdf", "Look."];
    succeeds(&tasklisp(dir.path(), &[&flags[..], &prompt].concat()));
    let seen = server.finish();
    let image = json!({"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": base64(PNG)}});
    let text = json!({"type": "text", "text": "Look."});
    assert_eq!(
        seen[0].json(),
        json!({"model": "claude-x", "max_tokens": 4096, "messages": [{"role": "user", "content": [
            image,
            {"type": "document", "source": {"type": "url", "url": "https://x.io/doc.pdf"}},
            text]}]})
    );
    let pdf = json!({"type": "document", "source": {"type": "base64", "media_type": "application/pdf", "data": base64(PDF)}});
    assert_eq!(
        seen[1].json(),
        json!({"model": "claude-x", "max_tokens": 4096, "messages": [{"role": "user", "content": [
            image, pdf, text]}], "stream": true})
    );
}

/// Each bad attachment fails before anything is sent: the server gets no request.
#[test]
fn too_large_unsupported_or_missing_attachments_fail_before_any_request() {
    let dir = files();
    std::fs::write(dir.path().join("big.png"), vec![0u8; 5 * 1024 * 1024 + 1]).unwrap();
    let server = FakeServer::start(Vec::new());
    let anthropic = provider("anthropic", &server.base, "claude-x");
    let cases: [(&[&str], &[&str]); 4] = [
        (
            &["-a", "big.png"],
            &[
                "input_validation_failure",
                "big.png",
                "5242881 bytes",
                "limit of 5242880 bytes",
            ],
        ),
        (
            &["-a", "a.wav"],
            &["anthropic does not take audio/wav", "it takes images"],
        ),
        (
            &["-a", "gone.png"],
            &["input_validation_failure", "gone.png", "cannot read"],
        ),
        (&["-a", "notes.txt"], &["notes.txt", "give :mime"]),
    ];
    for (attach, words) in cases {
        let args = [&anthropic[..], &["prompt"], attach, &["Look."]].concat();
        let stderr = fails(&tasklisp(dir.path(), &args));
        for word in words {
            assert!(stderr.contains(word), "{word}: {stderr}");
        }
    }
    assert!(server.finish().is_empty(), "a request was sent");
}

#[test]
fn the_sandbox_reads_an_attachment_only_with_allow_read() {
    let dir = files();
    let program = r#"(deftask look () :prompt "Look." :attachments ["cat.png"])
                     (println (get (look) "content"))"#;
    let sandboxed = ["--provider", "echo", "--sandbox", "eval", program];
    let stderr = fails(&tasklisp(dir.path(), &sandboxed));
    assert!(
        stderr.contains("permission_denied") && stderr.contains("--allow-read="),
        "{stderr}"
    );
    let allowed = [
        "--provider",
        "echo",
        "--sandbox",
        "--allow-read=.",
        "eval",
        program,
    ];
    assert_eq!(
        succeeds(&tasklisp(dir.path(), &allowed)).lines().next(),
        Some("Look.")
    );
}

/// The log keeps what was sent, but an attachment only as its digest and size: its
/// bytes and their base64 appear nowhere in the database's files.
#[test]
fn the_run_log_holds_the_digest_and_size_never_the_bytes() {
    let dir = files();
    let server = FakeServer::start(vec![reply(200, chat_answer())]);
    let base = format!("{}/v1", server.base);
    let flags = provider("openai", &base, "gpt-4o");
    succeeds(&tasklisp(
        dir.path(),
        &[&flags[..], &["eval", DESCRIBE]].concat(),
    ));
    assert_eq!(server.finish().len(), 1);
    let mut stored = Vec::new();
    for entry in std::fs::read_dir(dir.path()).unwrap() {
        let path = entry.unwrap().path();
        if path
            .file_name()
            .unwrap()
            .to_string_lossy()
            .starts_with("log.db")
        {
            stored.extend(std::fs::read(path).unwrap());
        }
    }
    let holds = |needle: &[u8]| stored.windows(needle.len()).any(|w| w == needle);
    for bytes in [PNG, PDF, WAV] {
        assert!(!holds(bytes), "the log holds an attachment's bytes");
        assert!(!holds(base64(bytes).as_bytes()), "the log holds its base64");
    }
    let sha = "sha256";
    assert!(
        holds(sha.as_bytes()) && holds(b"cat.png"),
        "the digest is logged"
    );
}

/// A cassette records an attachment's digest and size with the request, never its bytes,
/// and replays the run from it.
#[test]
fn a_cassette_holds_the_digest_and_replays() {
    let dir = files();
    let record = ["--provider", "record:echo", "eval", DESCRIBE];
    let out = succeeds(&tasklisp(dir.path(), &record));
    assert_eq!(out.lines().next(), Some("Describe them."));
    let cassette = std::fs::read(dir.path().join("tasklisp-cassette.jsonl")).unwrap();
    let holds = |needle: &[u8]| cassette.windows(needle.len()).any(|w| w == needle);
    for bytes in [PNG, PDF, WAV] {
        assert!(!holds(bytes) && !holds(base64(bytes).as_bytes()));
    }
    assert!(holds(b"\"sha256\"") && holds(b"\"size\""));
    let replay = ["--provider", "replay", "eval", DESCRIBE];
    assert_eq!(
        succeeds(&tasklisp(dir.path(), &replay)).lines().next(),
        Some("Describe them.")
    );
}

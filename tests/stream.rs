//! Streaming from the command line: `tasklisp run --stream` and `tasklisp prompt`
//! against a fake OpenAI-compatible server (plain sockets, so every chunk is flushed)
//! that sends its answer as server-sent events in HTTP chunks, holding the rest of the
//! answer until the test lets it go — so a terminal
//! is seen to show the text before the answer is complete.
#![cfg(unix)]

use expectrl::{Eof, Expect, Session};
use serde_json::{json, Value as Json};
use std::io::Write;
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc::{self, Receiver, Sender};
use std::time::Duration;

/// An OpenAI-compatible server streaming "Hello" at once and " world" with the end when
/// released, each event its own HTTP chunk, flushed; it reports each request body.
struct StreamingServer {
    base: String,
    release: Sender<()>,
    bodies: Receiver<Json>,
}

fn event(data: &Json) -> String {
    format!("data: {data}\n\n")
}

fn delta(text: &str) -> Json {
    json!({"choices": [{"index": 0, "delta": {"content": text}, "finish_reason": null}]})
}

#[path = "common/raw_http.rs"]
mod raw_http;

/// Reads one request and returns its body as JSON.
fn read_request(stream: &mut TcpStream) -> std::io::Result<Json> {
    let body = raw_http::read_request(stream)?;
    Ok(serde_json::from_slice(&body).unwrap_or(Json::Null))
}

/// Writes `text` as one HTTP chunk and flushes it.
fn chunk(stream: &mut TcpStream, text: &str) -> std::io::Result<()> {
    write!(stream, "{:x}\r\n{text}\r\n", text.len())?;
    stream.flush()
}

fn answer(stream: &mut TcpStream, released: &Receiver<()>) -> std::io::Result<()> {
    stream.write_all(
        b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\nconnection: close\r\n\r\n",
    )?;
    chunk(
        stream,
        &event(&json!({"choices": [{"index": 0,
        "delta": {"role": "assistant", "content": ""}, "finish_reason": null}]})),
    )?;
    chunk(stream, &event(&delta("Hel")))?;
    chunk(stream, &event(&delta("lo")))?;
    if released.recv().is_err() {
        return Ok(());
    }
    chunk(stream, &event(&delta(" world")))?;
    chunk(
        stream,
        &event(&json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})),
    )?;
    chunk(
        stream,
        &event(&json!({"choices": [], "usage": {"prompt_tokens": 7, "completion_tokens": 3}})),
    )?;
    chunk(stream, "data: [DONE]\n\n")?;
    stream.write_all(b"0\r\n\r\n")?;
    stream.flush()
}

impl StreamingServer {
    fn start() -> StreamingServer {
        let listener = TcpListener::bind("127.0.0.1:0").expect("a port");
        let base = format!("http://{}/v1", listener.local_addr().expect("an address"));
        let (release, released) = mpsc::channel::<()>();
        let (report, bodies) = mpsc::channel();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { continue };
                if let Ok(body) = read_request(&mut stream) {
                    let _ = report.send(body);
                    let _ = answer(&mut stream, &released);
                }
            }
        });
        StreamingServer {
            base,
            release,
            bodies,
        }
    }
}

const SCRIPT: &str = r#"(deftask greet () :prompt "Say hello")
(define answer (greet))
(prn (get answer "content") (get (run-usage) "output_tokens"))
"#;

fn tasklisp(dir: &Path, server: &StreamingServer, args: &[&str]) -> Command {
    std::fs::write(dir.join("main.sexp"), SCRIPT).expect("write the script");
    let mut command = Command::new(env!("CARGO_BIN_EXE_tasklisp"));
    command
        .current_dir(dir)
        .env("TASKLISP_LOG", "off")
        .env("OPENAI_API_KEY", "sk-test")
        .env("TERM", "xterm")
        .args(["--provider", "openai", "--model", "gpt-4o-mini"])
        .args(["--base-url", &server.base])
        .args(args);
    command
}

/// Runs with stdin empty and stdout and stderr captured, once the server may answer
/// whole.
fn piped(dir: &Path, server: &StreamingServer, args: &[&str]) -> std::process::Output {
    server.release.send(()).expect("the server runs");
    tasklisp(dir, server, args)
        .stdin(Stdio::null())
        .output()
        .expect("runs")
}

/// What the streamed request asked: the usual body, with `stream` and the usage.
fn assert_streamed_body(body: &Json, task: &str) {
    assert_eq!(
        body,
        &json!({"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "Say hello"}],
                "prompt_cache_key": task, "stream": true, "stream_options": {"include_usage": true}})
    );
}

#[test]
fn a_terminal_sees_the_text_before_the_answer_is_complete() {
    let dir = tempfile::tempdir().expect("temp dir");
    let server = StreamingServer::start();
    let command = tasklisp(dir.path(), &server, &["run", "--stream", "main.sexp"]);
    let mut session = Session::spawn(command).expect("spawns");
    session.set_expect_timeout(Some(Duration::from_secs(60)));
    session
        .expect("Hello")
        .expect("the first pieces, while the rest is held");
    server.release.send(()).expect("the server runs");
    session
        .expect("\"Hello world\" 3")
        .expect("the whole answer, as the program prints it");
    session.expect(Eof).expect("the run ends");
    assert_streamed_body(&server.bodies.recv().expect("a request"), "greet");
}

#[test]
fn with_stdout_a_pipe_the_text_streams_to_stderr() {
    let dir = tempfile::tempdir().expect("temp dir");
    let server = StreamingServer::start();
    let output = piped(dir.path(), &server, &["run", "--stream", "main.sexp"]);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&output.stdout),
        "\"Hello world\" 3\n"
    );
    assert_eq!(String::from_utf8_lossy(&output.stderr), "Hello world\n");
    assert_streamed_body(&server.bodies.recv().expect("a request"), "greet");
}

#[test]
fn prompt_streams_its_answer_to_stdout() {
    let dir = tempfile::tempdir().expect("temp dir");
    let server = StreamingServer::start();
    let output = piped(dir.path(), &server, &["prompt", "Say hello"]);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&output.stdout), "Hello world\n");
    assert_streamed_body(&server.bodies.recv().expect("a request"), "prompt");
}

#[test]
fn a_stream_silent_past_the_timeout_fails_naming_it() {
    let dir = tempfile::tempdir().expect("temp dir");
    let server = StreamingServer::start();
    let output = tasklisp(dir.path(), &server, &["run", "--stream", "main.sexp"])
        .env("TASKLISP_LLM_TIMEOUT", "0.5")
        .stdin(Stdio::null())
        .output()
        .expect("runs");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success());
    assert!(stderr.starts_with("Hello\n"), "{stderr}");
    assert!(
        stderr.contains("no complete answer within 0.500s (the timeout)"),
        "{stderr}"
    );
}

/// At the REPL an answer that arrives in pieces shows as it comes, then the REPL prints
/// the result as always.
#[test]
fn the_repl_shows_a_streamed_answer_as_it_arrives() {
    let dir = tempfile::tempdir().expect("temp dir");
    let server = StreamingServer::start();
    let mut command = tasklisp(dir.path(), &server, &["--quiet"]);
    command.env("TASKLISP_HISTORY", dir.path().join("history"));
    let mut repl = Session::spawn(command).expect("the REPL starts");
    repl.set_expect_timeout(Some(Duration::from_secs(60)));
    repl.send_line("(deftask greet () :prompt \"Say hi\")")
        .expect("typed");
    repl.send_line("(get (greet) \"content\")").expect("typed");
    repl.expect("Hello")
        .expect("the first pieces, while the rest is held");
    server.release.send(()).expect("the server runs");
    repl.expect("\"Hello world\"").expect("the result printed");
    // Ctrl-D typed before the prompt is back would reach a terminal in cooked mode,
    // where it is an end of file nobody reads, and be lost.
    repl.expect("tl> ").expect("the prompt again");
    repl.send(expectrl::ControlCode::EndOfTransmission)
        .expect("Ctrl-D");
    repl.expect(Eof).expect("the REPL ends");
}

#[test]
fn the_repl_chat_shows_the_answer_as_it_arrives() {
    let dir = tempfile::tempdir().expect("temp dir");
    let server = StreamingServer::start();
    let mut command = tasklisp(dir.path(), &server, &[]);
    command.env("TASKLISP_HISTORY", dir.path().join("history"));
    let mut session = Session::spawn(command).expect("spawns");
    session.set_expect_timeout(Some(Duration::from_secs(60)));
    session.expect("tl> ").expect("the prompt");
    session.send_line(":chat").expect("types");
    session.expect("chat> ").expect("the chat prompt");
    session.send_line("Say hello").expect("types");
    session
        .expect("Hello")
        .expect("the first pieces, while the rest is held");
    server.release.send(()).expect("the server runs");
    session.expect(" world").expect("the rest of the answer");
    session.expect("chat> ").expect("the chat prompt again");
    session.send_line(":end").expect("types");
    session.expect("; chat ended").expect("leaves the chat");
    session.send_line(":quit").expect("types");
    session.expect(Eof).expect("the REPL ends");
    assert_streamed_body(&server.bodies.recv().expect("a request"), "chat");
}

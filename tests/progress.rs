//! `pmap`'s progress line on stderr: drawn through a pseudo-terminal while the items
//! wait for a fake model server (which holds every request until the test has seen the
//! line), cleared when they are done, and never written when stderr is a pipe.
#![cfg(unix)]

use expectrl::{Eof, Expect, Session};
use serde_json::{json, Value as Json};
use std::num::NonZeroU16;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

enum Event {
    Request(tiny_http::Request),
    Release,
}

/// An OpenAI-compatible server answering `answer: PROMPT` (usage 10 + 5), holding every
/// request until [`HeldServer::release`].
struct HeldServer {
    base: String,
    events: mpsc::Sender<Event>,
}

impl HeldServer {
    fn start() -> HeldServer {
        let server = tiny_http::Server::http("127.0.0.1:0").expect("a port");
        let base = format!("http://{}/v1", server.server_addr().to_ip().expect("an IP"));
        let (events, received) = mpsc::channel();
        let incoming = events.clone();
        std::thread::spawn(move || {
            for request in server.incoming_requests() {
                let _ = incoming.send(Event::Request(request));
            }
        });
        std::thread::spawn(move || {
            let mut held = Vec::new();
            let mut released = false;
            for event in received {
                match event {
                    Event::Request(request) if released => answer(request),
                    Event::Request(request) => held.push(request),
                    Event::Release => {
                        released = true;
                        held.drain(..).for_each(answer);
                    }
                }
            }
        });
        HeldServer { base, events }
    }

    fn release(&self) {
        self.events.send(Event::Release).expect("the server runs");
    }
}

fn answer(mut request: tiny_http::Request) {
    let mut body = String::new();
    let _ = request.as_reader().read_to_string(&mut body);
    let body: Json = serde_json::from_str(&body).unwrap_or(Json::Null);
    let prompt = body["messages"][0]["content"].as_str().unwrap_or("");
    let reply = json!({"choices": [{"message": {"role": "assistant", "content": format!("answer: {prompt}")}}],
                       "usage": {"prompt_tokens": 10, "completion_tokens": 5}});
    let _ = request.respond(tiny_http::Response::from_string(reply.to_string()));
}

const SCRIPT: &str = r#"(deftask ask (x) :prompt "Say {{x}}")
(prn (pmap (fn (x) (get (ask x) "content")) ["a" "b" "c" "d" "e" "f"]))
"#;
const PRINTED: &str = r#"("answer: Say a" "answer: Say b" "answer: Say c" "answer: Say d" "answer: Say e" "answer: Say f")"#;

fn tasklisp(dir: &Path, server: &HeldServer) -> Command {
    std::fs::write(dir.join("main.sexp"), SCRIPT).expect("write the script");
    let mut command = Command::new(env!("CARGO_BIN_EXE_tasklisp"));
    command
        .current_dir(dir)
        .env("TASKLISP_LOG", dir.join("log.db"))
        .env("OPENAI_API_KEY", "sk-test")
        .env("TERM", "xterm")
        .args(["--provider", "openai", "--model", "gpt-4o-mini"])
        .args(["--base-url", &server.base, "run", "main.sexp"]);
    command
}

#[test]
fn a_terminal_sees_the_line_while_the_items_wait_and_not_after() {
    let dir = tempfile::tempdir().expect("temp dir");
    let server = HeldServer::start();
    let mut session = Session::spawn(tasklisp(dir.path(), &server)).expect("spawns");
    session
        .get_process_mut()
        .set_window_size(120, 24)
        .expect("window size");
    session.set_expect_timeout(Some(Duration::from_secs(60)));
    let mut bytes = Vec::new();
    let seen = session
        .expect("0/6  0 failed · 6 in flight · 0 tokens · $0.0000")
        .expect("the progress line while every item waits");
    bytes.extend_from_slice(seen.before());
    bytes.extend(seen.matches().flat_map(|m| m.iter().copied()));
    server.release();
    let rest = session.expect(Eof).expect("the run ends");
    bytes.extend_from_slice(rest.before());
    bytes.extend(rest.matches().flat_map(|m| m.iter().copied()));
    let size = |n| NonZeroU16::new(n).expect("a size");
    let mut terminal = vt100::Parser::new(size(24), size(120), 0);
    terminal.process(&bytes);
    let screen = terminal.screen().contents();
    assert_eq!(
        screen.trim(),
        PRINTED,
        "the line is cleared when pmap ends; the terminal got {:?}",
        String::from_utf8_lossy(&bytes)
    );
}

#[test]
fn a_pipe_gets_no_progress_line() {
    let dir = tempfile::tempdir().expect("temp dir");
    let server = HeldServer::start();
    server.release();
    let output = tasklisp(dir.path(), &server)
        .stdin(Stdio::null())
        .output()
        .expect("runs");
    assert!(output.status.success());
    assert_eq!(String::from_utf8_lossy(&output.stdout).trim(), PRINTED);
    assert_eq!(String::from_utf8_lossy(&output.stderr), "");
}

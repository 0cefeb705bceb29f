//! A fake model server on 127.0.0.1: answers scripted replies in order and hands back
//! every request it received, for tests that assert exact request bodies.
#![allow(dead_code)] // not every test crate uses every helper

use serde_json::Value as Json;
use std::sync::mpsc::{self, Receiver};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// One scripted answer of the fake server.
pub struct Reply {
    pub status: u16,
    pub body: String,
    pub headers: Vec<(&'static str, String)>,
    /// How long the server waits before answering.
    pub delay: Duration,
}

pub fn reply(status: u16, body: Json) -> Reply {
    Reply {
        status,
        body: body.to_string(),
        headers: vec![("content-type", "application/json".into())],
        delay: Duration::ZERO,
    }
}

/// An answer sent as server-sent events (sent whole here: the SSE parser's own tests cut
/// bytes anywhere, and tests/stream.rs sends them in chunks held apart).
pub fn events_reply(events: &[Json], last: &str) -> Reply {
    let mut body: String = events.iter().map(|e| format!("data: {e}\n\n")).collect();
    body.push_str(last);
    Reply {
        status: 200,
        body,
        headers: vec![("content-type", "text/event-stream".into())],
        delay: Duration::ZERO,
    }
}

/// What the server received.
#[derive(Debug)]
pub struct Seen {
    /// When the request arrived.
    pub at: Instant,
    pub method: String,
    pub path: String,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Seen {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    pub fn json(&self) -> Json {
        serde_json::from_str(&self.body).unwrap()
    }
}

/// A server that answers with `replies` in order, then stops listening. It waits at
/// most 10 s for each request, so a test that goes wrong cannot hang.
pub struct FakeServer {
    pub base: String,
    seen: Receiver<Seen>,
    thread: JoinHandle<()>,
}

impl FakeServer {
    pub fn start(replies: Vec<Reply>) -> FakeServer {
        let server = tiny_http::Server::http("127.0.0.1:0").unwrap();
        let address = server.server_addr().to_ip().unwrap();
        let (sender, seen) = mpsc::channel();
        let thread = std::thread::spawn(move || {
            for answer in replies {
                let Ok(Some(mut request)) = server.recv_timeout(Duration::from_secs(10)) else {
                    return;
                };
                let mut body = String::new();
                request.as_reader().read_to_string(&mut body).unwrap();
                let _ = sender.send(Seen {
                    at: Instant::now(),
                    method: request.method().to_string(),
                    path: request.url().to_owned(),
                    headers: request
                        .headers()
                        .iter()
                        .map(|h| (h.field.as_str().to_string(), h.value.as_str().to_owned()))
                        .collect(),
                    body,
                });
                std::thread::sleep(answer.delay);
                let mut response =
                    tiny_http::Response::from_string(answer.body).with_status_code(answer.status);
                for (name, value) in answer.headers {
                    response.add_header(tiny_http::Header::from_bytes(name, value).unwrap());
                }
                let _ = request.respond(response);
            }
        });
        FakeServer {
            base: format!("http://{address}"),
            seen,
            thread,
        }
    }

    /// Everything received, once the server has answered all its replies.
    pub fn finish(self) -> Vec<Seen> {
        self.thread.join().unwrap();
        self.seen.try_iter().collect()
    }
}

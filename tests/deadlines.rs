//! Malicious model servers on 127.0.0.1 that never quite answer: headers or a body sent
//! a byte at a time, a stream of keep-alive comments, an event that never ends, a
//! `Retry-After` of thirty years. A provider's `"timeout"` bounds each attempt whole,
//! and a call waits a bounded time in all between attempts; each test has a hang guard
//! far above the time it should take and asserts no upper bound near it.

use serde_json::json;
use std::io::Write;
use std::net::{TcpListener, TcpStream};
use std::sync::mpsc;
use std::time::Duration;
use tasklisp::internals::provider::build;
use tasklisp::{Cancel, Message, Request};

#[path = "common/raw_http.rs"]
mod raw_http;

/// A timed-out call must end within this (its timeout is 1 s): a guard, not a timing.
const HANG_GUARD: Duration = Duration::from_secs(30);
/// How often the servers send their next byte or comment.
const DRIP: Duration = Duration::from_millis(200);

/// A server that reads each request and hands the connection to `behave`, for every
/// connection until the test ends; `behave` stops when the client hangs up (a write
/// fails). Returns the base URL for the `openai` provider.
fn serve(behave: fn(&mut TcpStream) -> std::io::Result<()>) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").expect("a port");
    let base = format!("http://{}/v1", listener.local_addr().expect("an address"));
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            std::thread::spawn(move || {
                let _ = raw_http::read_request(&mut stream).and_then(|_| behave(&mut stream));
            });
        }
    });
    base
}

/// Writes `bytes` one at a time, a `DRIP` apart, flushing each.
fn drip(stream: &mut TcpStream, bytes: &[u8]) -> std::io::Result<()> {
    for byte in bytes {
        stream.write_all(&[*byte])?;
        stream.flush()?;
        std::thread::sleep(DRIP);
    }
    Ok(())
}

fn answer_json() -> String {
    json!({"choices": [{"index": 0, "message": {"role": "assistant", "content": "late"},
                        "finish_reason": "stop"}]})
    .to_string()
}

/// Headers a byte at a time, for ever (the head never ends).
fn dribbled_headers(stream: &mut TcpStream) -> std::io::Result<()> {
    drip(stream, b"HTTP/1.1 200 OK\r\n")?;
    loop {
        drip(stream, b"x-wait: a\r\n")?;
    }
}

/// Whole headers, then a body a byte at a time.
fn dribbled_body(stream: &mut TcpStream) -> std::io::Result<()> {
    let body = answer_json().repeat(100);
    write!(
        stream,
        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n",
        body.len()
    )?;
    drip(stream, body.as_bytes())
}

/// An event stream of nothing but keep-alive comments.
fn pings(stream: &mut TcpStream) -> std::io::Result<()> {
    stream.write_all(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\r\n")?;
    loop {
        stream.write_all(b": ping\n\n")?;
        stream.flush()?;
        std::thread::sleep(DRIP);
    }
}

/// An event stream in HTTP chunks whose one event never ends: a character per chunk.
fn endless_event(stream: &mut TcpStream) -> std::io::Result<()> {
    stream.write_all(
        b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n",
    )?;
    stream.write_all(b"6\r\ndata: \r\n")?;
    loop {
        drip(stream, b"1\r\nx\r\n")?;
    }
}

/// A rate limit lifted in thirty years.
fn retry_after_forever(stream: &mut TcpStream) -> std::io::Result<()> {
    let body = r#"{"error": {"message": "slow down"}}"#;
    write!(
        stream,
        "HTTP/1.1 429 Too Many Requests\r\nretry-after: 1000000000\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    )
}

fn provider(base: &str) -> std::sync::Arc<dyn tasklisp::Provider> {
    let options = json!({"base_url": base, "model": "m", "timeout": 1, "max_retries": 0});
    build("openai", &options, &|_| None).expect("a provider")
}

fn request() -> Request {
    Request {
        task: "t".into(),
        prompt: "p".into(),
        round: 1,
        messages: vec![Message::user("p")],
        ..Request::default()
    }
}

/// The error of one call (streamed or not) to the server at `base`, on a thread watched
/// by the hang guard.
fn failure(base: String, streamed: bool) -> tasklisp::Error {
    let (sender, receiver) = mpsc::channel();
    std::thread::spawn(move || {
        let provider = provider(&base);
        let cancel = Cancel::default();
        let result = if streamed {
            provider.stream(&request(), &cancel, &mut |_| {})
        } else {
            provider.complete(&request(), &cancel)
        };
        let _ = sender.send(result);
    });
    match receiver.recv_timeout(HANG_GUARD) {
        Ok(Err(error)) => error,
        Ok(Ok(response)) => panic!("answered: {:?}", response.content),
        Err(_) => panic!("the call was still running after {HANG_GUARD:?}"),
    }
}

fn assert_timed_out(error: &tasklisp::Error) {
    assert_eq!(error.reason(), Some("llm_error"), "{error}");
    assert!(
        error
            .message()
            .contains("no complete answer within 1.000s (the timeout)"),
        "{}",
        error.message()
    );
    assert_eq!(error.details()["attempts"], 1);
}

#[test]
fn headers_sent_a_byte_at_a_time_meet_the_timeout() {
    assert_timed_out(&failure(serve(dribbled_headers), false));
}

#[test]
fn a_body_sent_a_byte_at_a_time_meets_the_timeout() {
    assert_timed_out(&failure(serve(dribbled_body), false));
}

#[test]
fn keep_alive_comments_do_not_extend_a_stream() {
    assert_timed_out(&failure(serve(pings), true));
}

#[test]
fn an_event_that_never_ends_meets_the_timeout() {
    assert_timed_out(&failure(serve(endless_event), true));
}

#[test]
fn a_retry_after_past_the_wait_cap_ends_the_call_saying_so() {
    for streamed in [false, true] {
        let base = serve(retry_after_forever);
        let (sender, receiver) = mpsc::channel();
        std::thread::spawn(move || {
            let options = json!({"base_url": base, "model": "m", "max_retries": 3});
            let provider = build("openai", &options, &|_| None).expect("a provider");
            let result = if streamed {
                provider.stream(&request(), &Cancel::default(), &mut |_| {})
            } else {
                provider.complete(&request(), &Cancel::default())
            };
            let _ = sender.send(result.err());
        });
        let error = receiver
            .recv_timeout(HANG_GUARD)
            .expect("no wait of 120 s or more")
            .expect("an error");
        assert_eq!(error.details()["status"], 429);
        assert_eq!(error.details()["attempts"], 1);
        assert!(
            error.message().contains(
                "slow down (the server asked to wait 1000000000s more before retrying, \
                 past the 120s a call waits in all)"
            ),
            "{}",
            error.message()
        );
    }
}

//! `tasklisp mcp --http PORT`: the server over streamable HTTP at
//! `http://127.0.0.1:PORT/mcp`, on `std::net` with `httparse` for the request head. Every
//! POST carries one message and is answered with one JSON body (`202 Accepted` for a
//! notification) and `Connection: close`; the server keeps no sessions and opens no event
//! streams, so `GET` is `405`. Only this machine can reach it, and a browser page from
//! elsewhere is refused by its `Origin`.
//!
//! Each connection is read on its own thread with bounded reads (a capped head, a
//! `Content-Length` over the message limit refused before reading it, the whole request
//! within a deadline), so one slow or hostile client holds up no other; the messages are
//! answered one at a time on the serving thread, which owns the interpreter. At most
//! `MAX_CONNECTIONS` are open at once: past it a client is answered `503` and closed.

use super::protocol::MAX_MESSAGE_BYTES;
use super::server::{answer_bytes, too_large};
use crate::error::{Error, Result};
use crate::eval::Interp;
use std::io::{ErrorKind, Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{channel, Sender};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The one path served.
const PATH: &str = "/mcp";
/// The longest request head read.
const MAX_HEAD_BYTES: usize = 16 << 10;
/// The most headers a request head may have.
const MAX_HEADERS: usize = 64;
/// How long a client has to send its whole request (an idle connection is closed then).
const REQUEST_DEADLINE: Duration = Duration::from_secs(30);
/// How long writing the answer may take.
const WRITE_TIMEOUT: Duration = Duration::from_secs(30);
/// How long what a client still sends after its request is read before closing.
const DRAIN_DEADLINE: Duration = Duration::from_secs(2);
/// The most connections open at once.
pub const MAX_CONNECTIONS: usize = 64;
/// How long the listener rests after failing to accept (out of file descriptors).
const ACCEPT_BACKOFF: Duration = Duration::from_millis(50);

/// One message to answer and where its answer (`None`: a notification) goes.
type Job = (Vec<u8>, Sender<Option<String>>);

pub fn serve(interp: &Interp, port: u16) -> Result<i32> {
    let listener = TcpListener::bind(("127.0.0.1", port))
        .map_err(|e| Error::eval(format!("mcp: cannot listen on 127.0.0.1:{port}: {e}")))?;
    let port = listener.local_addr().map_or(port, |address| address.port());
    eprintln!("tasklisp: serving MCP at http://127.0.0.1:{port}{PATH}");
    let (jobs, incoming) = channel::<Job>();
    std::thread::Builder::new()
        .name("tasklisp-mcp-accept".into())
        .spawn(move || accept(&listener, &jobs))
        .map_err(|e| Error::eval(format!("mcp: cannot start the listener: {e}")))?;
    for (bytes, answered) in incoming {
        let answer = answer_bytes(interp, &bytes).map(|answer| answer.to_string());
        let _ = answered.send(answer);
    }
    Ok(0)
}

/// Takes connections for ever, each on a thread of its own while there are fewer than
/// `MAX_CONNECTIONS`; a failure to accept or to start a thread drops that connection
/// only.
fn accept(listener: &TcpListener, jobs: &Sender<Job>) {
    let open = Arc::new(AtomicUsize::new(0));
    for stream in listener.incoming() {
        let mut stream = match stream {
            Ok(stream) => stream,
            Err(_) => {
                std::thread::sleep(ACCEPT_BACKOFF);
                continue;
            }
        };
        let Some(slot) = Slot::take(&open) else {
            let _ = stream.set_write_timeout(Some(DRAIN_DEADLINE));
            let busy =
                Reply::plain(503, "too many connections; try again").with("Retry-After", "1");
            let _ = stream.write_all(&busy.bytes());
            continue;
        };
        let jobs = jobs.clone();
        let _ = std::thread::Builder::new()
            .name("tasklisp-mcp-connection".into())
            .spawn(move || connection(stream, &jobs, slot));
    }
}

/// One of the `MAX_CONNECTIONS` places, given back when dropped.
struct Slot(Arc<AtomicUsize>);

impl Slot {
    fn take(open: &Arc<AtomicUsize>) -> Option<Slot> {
        let fits = |n: usize| (n < MAX_CONNECTIONS).then_some(n + 1);
        open.fetch_update(Ordering::SeqCst, Ordering::SeqCst, fits)
            .ok()
            .map(|_| Slot(open.clone()))
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Reads one request, answers it and closes; a client that went away is not an error.
fn connection(mut stream: TcpStream, jobs: &Sender<Job>, _slot: Slot) {
    let _ = stream.set_write_timeout(Some(WRITE_TIMEOUT));
    let Some(reply) = respond(&mut stream, jobs) else {
        return;
    };
    let _ = stream.write_all(&reply.bytes());
    // Drain what the client still sends (bounded) so closing does not reset the connection
    // before it reads the answer.
    let _ = stream.shutdown(Shutdown::Write);
    let until = Deadline::after(DRAIN_DEADLINE);
    let mut sink = vec![0u8; 16 << 10];
    let mut drained = 0;
    while drained < MAX_MESSAGE_BYTES {
        match until.read(&mut stream, &mut sink) {
            Some(read @ 1..) => drained += read,
            _ => return,
        }
    }
}

/// When the reads of one connection must be done by.
struct Deadline(Instant);

impl Deadline {
    fn after(wait: Duration) -> Deadline {
        Deadline(Instant::now() + wait)
    }

    /// One read, waiting at most what is left; `None` once the time is up or on an error.
    fn read(&self, stream: &mut TcpStream, buffer: &mut [u8]) -> Option<usize> {
        loop {
            let left = self.0.saturating_duration_since(Instant::now());
            if left.is_zero() || stream.set_read_timeout(Some(left)).is_err() {
                return None;
            }
            match stream.read(buffer) {
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                read => return read.ok(),
            }
        }
    }
}

/// The reply to the request on `stream`, or `None` if the client stopped sending (or
/// took longer than `REQUEST_DEADLINE` to send it all).
fn respond(stream: &mut TcpStream, jobs: &Sender<Job>) -> Option<Reply> {
    let until = Deadline::after(REQUEST_DEADLINE);
    let (head, mut body) = match read_head(stream, &until)? {
        Ok(read) => read,
        Err(reply) => return Some(reply),
    };
    let reply = match (head.method.as_str(), path(&head.target)) {
        _ if !local_origin(head.origin.as_deref()) => {
            Reply::plain(403, "the Origin is not this machine")
        }
        ("POST", PATH) if head.chunked => {
            Reply::plain(411, "send the message with a Content-Length")
        }
        ("POST", PATH) => match head.length {
            None => Reply::plain(411, "send the message with a Content-Length"),
            Some(length) if length > MAX_MESSAGE_BYTES => Reply::json(413, too_large().to_string()),
            Some(length) => {
                read_body(stream, &until, &mut body, length)?;
                answer(jobs, body)
            }
        },
        (_, PATH) => Reply::plain(405, "POST a JSON-RPC message").with("Allow", "POST"),
        _ => Reply::plain(404, "MCP is served at /mcp"),
    };
    Some(reply)
}

/// Hands the message to the serving thread and waits for its answer.
fn answer(jobs: &Sender<Job>, body: Vec<u8>) -> Reply {
    let (answered, answer) = channel();
    let answer = jobs
        .send((body, answered))
        .ok()
        .and_then(|()| answer.recv().ok());
    match answer {
        Some(Some(answer)) => Reply::json(200, answer),
        Some(None) => Reply::plain(202, ""),
        None => Reply::plain(503, "the server is stopping"),
    }
}

/// What the server needs of a request head.
struct Head {
    method: String,
    target: String,
    origin: Option<String>,
    length: Option<usize>,
    chunked: bool,
}

/// The head and the body bytes read past it; an error reply for a head that is malformed
/// or too long; `None` if the client stopped sending first.
fn read_head(
    stream: &mut TcpStream,
    until: &Deadline,
) -> Option<std::result::Result<(Head, Vec<u8>), Reply>> {
    let mut bytes = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        let read = until.read(stream, &mut chunk).filter(|&n| n > 0)?;
        bytes.extend_from_slice(chunk.get(..read)?);
        match parse_head(&bytes) {
            Ok(Some((head, end))) => return Some(Ok((head, bytes.split_off(end)))),
            Ok(None) if bytes.len() <= MAX_HEAD_BYTES => {}
            Ok(None) => return Some(Err(Reply::plain(431, "the request head is too long"))),
            Err(reply) => return Some(Err(reply)),
        }
    }
}

/// The head and where it ends, `None` while it is incomplete.
fn parse_head(bytes: &[u8]) -> std::result::Result<Option<(Head, usize)>, Reply> {
    let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut request = httparse::Request::new(&mut headers);
    let end = match request.parse(bytes) {
        Ok(httparse::Status::Complete(end)) => end,
        Ok(httparse::Status::Partial) => return Ok(None),
        Err(e) => return Err(Reply::plain(400, &format!("a malformed request: {e}"))),
    };
    let values = |name: &str| {
        let named = request
            .headers
            .iter()
            .filter(|h| h.name.eq_ignore_ascii_case(name));
        named
            .map(|h| String::from_utf8_lossy(h.value).trim().to_owned())
            .collect::<Vec<_>>()
    };
    let header = |name: &str| values(name).into_iter().next();
    // Two lengths that differ: which one a proxy in front believed is anyone's guess.
    let lengths = values("Content-Length");
    if lengths.iter().any(|length| Some(length) != lengths.first()) {
        return Err(Reply::plain(400, "two different Content-Length headers"));
    }
    let length = match header("Content-Length").map(|value| value.parse::<usize>()) {
        None => None,
        Some(Ok(length)) => Some(length),
        // Too many digits for a usize is over the limit too.
        Some(Err(_)) if header("Content-Length").is_some_and(all_digits) => Some(usize::MAX),
        Some(Err(_)) => return Err(Reply::plain(400, "a malformed Content-Length")),
    };
    let head = Head {
        method: request.method.unwrap_or("").to_owned(),
        target: request.path.unwrap_or("").to_owned(),
        origin: header("Origin"),
        length,
        chunked: header("Transfer-Encoding").is_some(),
    };
    Ok(Some((head, end)))
}

fn all_digits(value: String) -> bool {
    !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit())
}

/// Completes `body` (the bytes read past the head) to `length` bytes, at most the limit.
fn read_body(
    stream: &mut TcpStream,
    until: &Deadline,
    body: &mut Vec<u8>,
    length: usize,
) -> Option<()> {
    body.truncate(length);
    let mut chunk = vec![0u8; 64 << 10];
    while body.len() < length {
        let wanted = (length - body.len()).min(chunk.len());
        let read = until
            .read(stream, chunk.get_mut(..wanted)?)
            .filter(|&n| n > 0)?;
        body.extend_from_slice(chunk.get(..read)?);
    }
    Some(())
}

fn path(target: &str) -> &str {
    target.split('?').next().unwrap_or(target)
}

/// No `Origin` (a program), or a page served from this machine.
fn local_origin(origin: Option<&str>) -> bool {
    let Some(origin) = origin.map(str::to_ascii_lowercase) else {
        return true;
    };
    let host = origin.split("://").nth(1).unwrap_or("");
    let host = host.rsplit_once(':').map_or(host, |(host, _)| host);
    matches!(host, "127.0.0.1" | "localhost" | "[::1]")
}

/// An HTTP response, sent with `Connection: close`.
struct Reply {
    status: u16,
    headers: Vec<(&'static str, &'static str)>,
    body: String,
}

impl Reply {
    fn plain(status: u16, text: &str) -> Reply {
        Reply {
            status,
            headers: vec![("Content-Type", "text/plain; charset=utf-8")],
            body: text.to_owned(),
        }
    }

    fn json(status: u16, body: String) -> Reply {
        Reply {
            status,
            headers: vec![("Content-Type", "application/json")],
            body,
        }
    }

    fn with(mut self, name: &'static str, value: &'static str) -> Reply {
        self.headers.push((name, value));
        self
    }

    fn bytes(&self) -> Vec<u8> {
        let mut head = format!("HTTP/1.1 {} {}\r\n", self.status, reason(self.status));
        for (name, value) in &self.headers {
            head.push_str(&format!("{name}: {value}\r\n"));
        }
        head.push_str(&format!(
            "Content-Length: {}\r\nConnection: close\r\n\r\n",
            self.body.len()
        ));
        let mut bytes = head.into_bytes();
        bytes.extend_from_slice(self.body.as_bytes());
        bytes
    }
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        202 => "Accepted",
        400 => "Bad Request",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        411 => "Length Required",
        413 => "Content Too Large",
        431 => "Request Header Fields Too Large",
        _ => "Service Unavailable",
    }
}

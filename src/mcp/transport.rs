//! What both client transports share: the inbox they hand the client's messages through
//! (bounded: a server that floods it between calls loses its oldest messages, not our
//! memory), the deadline a write keeps, and reading newline-delimited messages within a
//! size.

use super::protocol::MAX_MESSAGE_BYTES;
use crate::error::Result;
use crate::provider::http::excerpt;
use serde_json::Value as Json;
use std::collections::VecDeque;
use std::io::{BufRead, Read};
use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

/// The most messages the inbox keeps unread; past it the oldest are dropped.
pub const INBOX_MESSAGES: usize = 1024;
/// The most bytes (as read off the wire) the inbox keeps unread.
pub const INBOX_BYTES: usize = 4 * MAX_MESSAGE_BYTES;

/// What a transport hands the client.
#[derive(Debug)]
pub enum Incoming {
    /// A JSON value, to be read as a JSON-RPC message.
    Message(Json),
    /// Something that is not JSON (an excerpt of it).
    Garbage(String),
    /// A message longer than `MAX_MESSAGE_BYTES`, dropped unread.
    TooLarge,
    /// The request with this id failed on the way (an HTTP error, a refused connection);
    /// `None`: a message that expected no answer.
    Failed(Option<u64>, String),
    /// The server is gone (why: its exit status and what it printed on stderr).
    Closed(String),
}

/// The longest pause between two checks for Ctrl-C while waiting for a server.
pub const POLL: Duration = Duration::from_millis(50);

/// How long a write to a server may wait: until `deadline`, or until `interrupted`
/// fails (Ctrl-C).
pub struct Until<'a> {
    pub deadline: Instant,
    pub interrupted: &'a dyn Fn() -> Result<()>,
}

impl<'a> Until<'a> {
    /// A wait of `wait` from now, or until `interrupted` fails.
    pub fn after(wait: Duration, interrupted: &'a dyn Fn() -> Result<()>) -> Until<'a> {
        Until {
            deadline: Instant::now() + wait,
            interrupted,
        }
    }

    /// Why a write must stop waiting now, if it must.
    pub fn expired(&self) -> Option<String> {
        if (self.interrupted)().is_err() {
            return Some("interrupted".into());
        }
        (Instant::now() >= self.deadline).then(|| "the server stopped reading".into())
    }

    /// What is left of the wait.
    pub fn left(&self) -> Duration {
        self.deadline.saturating_duration_since(Instant::now())
    }
}

/// How a transport reaches its server.
pub trait Transport: Send + Sync {
    /// Sends one message, waiting no longer than `until`; what comes back arrives in
    /// the client's inbox.
    fn send(&self, message: &Json, until: &Until) -> std::result::Result<(), String>;
    /// Tells the transport which protocol version was agreed (HTTP sends it as a header).
    fn agreed(&self, _version: &str) {}
    /// Ends the connection: the server is stopped or told the session is over.
    fn close(&self);
}

/// One line read within `MAX_MESSAGE_BYTES`.
pub enum Line {
    Text(Vec<u8>),
    TooLarge,
    End,
}

/// Reads the next line (without its newline). A longer line than the limit is read to
/// its end and dropped, so the next line starts clean.
pub fn read_line(reader: &mut impl BufRead) -> std::io::Result<Line> {
    let mut line = Vec::new();
    let limit = MAX_MESSAGE_BYTES as u64 + 1;
    let read = reader.by_ref().take(limit).read_until(b'\n', &mut line)?;
    if read == 0 {
        return Ok(Line::End);
    }
    if line.last() == Some(&b'\n') {
        line.pop();
        if line.last() == Some(&b'\r') {
            line.pop();
        }
        return Ok(Line::Text(line));
    }
    if line.len() as u64 == limit {
        skip_line(reader)?;
        return Ok(Line::TooLarge);
    }
    Ok(Line::Text(line))
}

/// Reads up to the next newline, keeping nothing.
fn skip_line(reader: &mut impl BufRead) -> std::io::Result<()> {
    loop {
        let buffer = reader.fill_buf()?;
        if buffer.is_empty() {
            return Ok(());
        }
        match buffer.iter().position(|b| *b == b'\n') {
            Some(at) => {
                reader.consume(at + 1);
                return Ok(());
            }
            None => {
                let all = buffer.len();
                reader.consume(all);
            }
        }
    }
}

/// A message's bytes as what the client is handed.
pub fn incoming(bytes: &[u8]) -> Incoming {
    match serde_json::from_slice(bytes) {
        Ok(json) => Incoming::Message(json),
        Err(_) => Incoming::Garbage(excerpt(&String::from_utf8_lossy(bytes), 200)),
    }
}

/// Puts the lines of `reader` in `inbox` until it ends; blank lines are skipped.
pub fn forward_lines(reader: &mut impl BufRead, inbox: &Inbox) {
    loop {
        match read_line(reader) {
            Ok(Line::Text(bytes)) if bytes.iter().all(u8::is_ascii_whitespace) => {}
            Ok(Line::Text(bytes)) => inbox.deliver(&bytes),
            Ok(Line::TooLarge) => inbox.put(Incoming::TooLarge, 0),
            Ok(Line::End) | Err(_) => return,
        }
    }
}

/// What a server sent that the client has not read yet, bounded by count and bytes, and
/// once the server is gone, why.
#[derive(Default)]
pub struct Inbox {
    queue: Mutex<Queue>,
    arrived: Condvar,
}

#[derive(Default)]
struct Queue {
    /// Each message with its size on the wire.
    messages: VecDeque<(Incoming, usize)>,
    bytes: usize,
    /// Messages dropped unread because the inbox was full.
    dropped: u64,
    closed: Option<String>,
}

impl Inbox {
    fn queue(&self) -> MutexGuard<'_, Queue> {
        self.queue.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A message's bytes, as the client reads them.
    pub fn deliver(&self, bytes: &[u8]) {
        self.put(incoming(bytes), bytes.len());
    }

    /// Adds a message of `size` bytes, dropping the oldest while the inbox is over its
    /// bounds (the newest is always kept).
    pub fn put(&self, message: Incoming, size: usize) {
        let mut queue = self.queue();
        queue.messages.push_back((message, size));
        queue.bytes += size;
        while queue.messages.len() > 1
            && (queue.messages.len() > INBOX_MESSAGES || queue.bytes > INBOX_BYTES)
        {
            if let Some((_, size)) = queue.messages.pop_front() {
                queue.bytes -= size;
                queue.dropped += 1;
            }
        }
        drop(queue);
        self.arrived.notify_all();
    }

    /// The server is gone: once the messages before are read, every read says why.
    pub fn close(&self, why: String) {
        self.queue().closed.get_or_insert(why);
        self.arrived.notify_all();
    }

    /// The next message, waiting at most `wait`; `None` if none came.
    pub fn take(&self, wait: Duration) -> Option<Incoming> {
        let queue = self.queue();
        let nothing = |q: &mut Queue| q.messages.is_empty() && q.closed.is_none();
        let (mut queue, _) = self
            .arrived
            .wait_timeout_while(queue, wait, nothing)
            .unwrap_or_else(PoisonError::into_inner);
        match queue.messages.pop_front() {
            Some((message, size)) => {
                queue.bytes -= size;
                Some(message)
            }
            None => queue.closed.clone().map(Incoming::Closed),
        }
    }

    /// How many messages were dropped unread because the inbox was full.
    pub fn dropped(&self) -> u64 {
        self.queue().dropped
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_over_the_limit_is_dropped_and_the_next_read() {
        let mut input = vec![b'x'; MAX_MESSAGE_BYTES + 10];
        input.extend_from_slice(b"\n{\"a\":1}\r\n");
        let mut reader = std::io::Cursor::new(input);
        assert!(matches!(read_line(&mut reader), Ok(Line::TooLarge)));
        match read_line(&mut reader) {
            Ok(Line::Text(line)) => assert_eq!(line, b"{\"a\":1}"),
            _ => panic!("the next line is read"),
        }
        assert!(matches!(read_line(&mut reader), Ok(Line::End)));
    }

    /// What the inbox holds, up to the first `Closed` (which every later read repeats).
    fn drained(inbox: &Inbox) -> Vec<Incoming> {
        let mut got = Vec::new();
        while let Some(message) = inbox.take(Duration::ZERO) {
            let closed = matches!(message, Incoming::Closed(_));
            got.push(message);
            if closed {
                break;
            }
        }
        got
    }

    #[test]
    fn lines_become_messages_or_garbage() {
        let inbox = Inbox::default();
        let mut reader = std::io::Cursor::new(b"{\"id\":1}\n\nnot json\n".to_vec());
        forward_lines(&mut reader, &inbox);
        let got = drained(&inbox);
        assert!(
            matches!(&got[..], [Incoming::Message(_), Incoming::Garbage(g)] if g == "not json")
        );
    }

    #[test]
    fn a_flood_keeps_the_newest_messages_and_counts_the_others() {
        let inbox = Inbox::default();
        let flood = INBOX_MESSAGES * 10;
        for n in 0..flood {
            inbox.deliver(format!("{{\"n\":{n}}}").as_bytes());
        }
        inbox.close("exited".into());
        let got = drained(&inbox);
        assert_eq!(inbox.dropped(), (flood - INBOX_MESSAGES) as u64);
        assert_eq!(
            got.len(),
            INBOX_MESSAGES + 1,
            "the newest, then why it closed"
        );
        let first_kept = (flood - INBOX_MESSAGES) as u64;
        assert!(matches!(&got[0], Incoming::Message(m) if m["n"] == first_kept));
        assert!(matches!(&got[INBOX_MESSAGES], Incoming::Closed(why) if why == "exited"));
        assert!(
            matches!(inbox.take(Duration::ZERO), Some(Incoming::Closed(_))),
            "a closed inbox stays closed"
        );
    }

    #[test]
    fn big_messages_are_bounded_by_bytes() {
        let inbox = Inbox::default();
        for _ in 0..10 {
            inbox.put(Incoming::TooLarge, MAX_MESSAGE_BYTES);
        }
        assert_eq!(drained(&inbox).len(), INBOX_BYTES / MAX_MESSAGE_BYTES);
        assert_eq!(
            inbox.dropped(),
            10 - (INBOX_BYTES / MAX_MESSAGE_BYTES) as u64
        );
    }
}

//! What both client transports share: the messages they hand the client over a channel,
//! and reading newline-delimited messages within a size.

use super::protocol::MAX_MESSAGE_BYTES;
use crate::provider::http::excerpt;
use serde_json::Value as Json;
use std::io::{BufRead, Read};
use std::sync::mpsc::Sender;

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

/// How a transport reaches its server.
pub trait Transport: Send + Sync {
    /// Sends one message; what comes back arrives on the client's channel.
    fn send(&self, message: &Json) -> Result<(), String>;
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

/// Hands the lines of `reader` to `sender` until it ends or nobody listens; blank lines
/// are skipped.
pub fn forward_lines(reader: &mut impl BufRead, sender: &Sender<Incoming>) {
    loop {
        let message = match read_line(reader) {
            Ok(Line::Text(bytes)) if bytes.iter().all(u8::is_ascii_whitespace) => continue,
            Ok(Line::Text(bytes)) => incoming(&bytes),
            Ok(Line::TooLarge) => Incoming::TooLarge,
            Ok(Line::End) | Err(_) => return,
        };
        if sender.send(message).is_err() {
            return;
        }
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

    #[test]
    fn lines_become_messages_or_garbage() {
        let (sender, receiver) = std::sync::mpsc::channel();
        let mut reader = std::io::Cursor::new(b"{\"id\":1}\n\nnot json\n".to_vec());
        forward_lines(&mut reader, &sender);
        drop(sender);
        let got: Vec<Incoming> = receiver.iter().collect();
        assert!(
            matches!(&got[..], [Incoming::Message(_), Incoming::Garbage(g)] if g == "not json")
        );
    }
}

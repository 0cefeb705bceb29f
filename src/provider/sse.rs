//! Server-sent events, as OpenAI and Anthropic stream their answers: bytes in, whole
//! events out, however the bytes are cut into chunks. Lines end in `\n`, `\r\n` or `\r`;
//! `data:` lines of one event are joined by `\n`; a blank line ends the event; lines
//! starting with `:` are comments (keep-alives). An event or a line longer than
//! [`MAX_EVENT_BYTES`] is an error, so a server cannot exhaust memory.

use crate::error::{Error, Reason, Result};

/// The longest event (or line) accepted.
pub const MAX_EVENT_BYTES: usize = 8 << 20;

/// One event: its `event:` name (empty when it had none) and its data.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Event {
    pub name: String,
    pub data: String,
}

/// Turns a stream of bytes into events.
#[derive(Default)]
pub struct Parser {
    /// The bytes of a line not ended yet.
    line: Vec<u8>,
    /// A `\r` ended the last line: a `\n` right after it belongs to that line end.
    after_cr: bool,
    name: String,
    data: String,
    /// The event being read has at least one `data:` line.
    has_data: bool,
}

impl Parser {
    /// Reads `bytes` and returns the events they complete.
    pub fn feed(&mut self, bytes: &[u8]) -> Result<Vec<Event>> {
        let mut events = Vec::new();
        for &byte in bytes {
            let after_cr = std::mem::replace(&mut self.after_cr, false);
            match byte {
                b'\n' if after_cr => {}
                b'\n' | b'\r' => {
                    self.after_cr = byte == b'\r';
                    let line = std::mem::take(&mut self.line);
                    events.extend(self.end_line(&line)?);
                }
                _ if self.line.len() >= MAX_EVENT_BYTES => return Err(too_long()),
                _ => self.line.push(byte),
            }
        }
        Ok(events)
    }

    /// The stream ended: an event not closed by a blank line still counts.
    pub fn finish(&mut self) -> Result<Option<Event>> {
        let line = std::mem::take(&mut self.line);
        if !line.is_empty() {
            if let Some(event) = self.end_line(&line)? {
                return Ok(Some(event));
            }
        }
        Ok(self.dispatch())
    }

    fn end_line(&mut self, line: &[u8]) -> Result<Option<Event>> {
        if line.is_empty() {
            return Ok(self.dispatch());
        }
        let line = String::from_utf8_lossy(line);
        if line.starts_with(':') {
            return Ok(None);
        }
        let (field, value) = match line.split_once(':') {
            Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
            None => (line.as_ref(), ""),
        };
        match field {
            "event" => value.clone_into(&mut self.name),
            "data" => {
                if self.data.len() + value.len() >= MAX_EVENT_BYTES {
                    return Err(too_long());
                }
                if self.has_data {
                    self.data.push('\n');
                }
                self.data.push_str(value);
                self.has_data = true;
            }
            // `id:`, `retry:` and unknown fields do not matter to a model's answer.
            _ => {}
        }
        Ok(None)
    }

    fn dispatch(&mut self) -> Option<Event> {
        let name = std::mem::take(&mut self.name);
        let data = std::mem::take(&mut self.data);
        std::mem::take(&mut self.has_data).then_some(Event { name, data })
    }
}

fn too_long() -> Error {
    Error::task_failure(
        Reason::LlmError,
        format!("a streamed event is longer than {MAX_EVENT_BYTES} bytes"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(name: &str, data: &str) -> Event {
        Event {
            name: name.into(),
            data: data.into(),
        }
    }

    #[test]
    fn events_come_out_whole_however_the_bytes_are_cut() {
        let text =
            b": keep-alive\r\nevent: delta\r\ndata: {\"a\":\r\ndata:1}\r\n\r\ndata: [DONE]\n\n";
        let whole = Parser::default().feed(text).unwrap();
        assert_eq!(whole, [event("delta", "{\"a\":\n1}"), event("", "[DONE]")]);
        for cut in 1..text.len() {
            let mut parser = Parser::default();
            let mut events = parser.feed(&text[..cut]).unwrap();
            events.extend(parser.feed(&text[cut..]).unwrap());
            assert_eq!(events, whole, "cut at {cut}");
        }
    }

    #[test]
    fn an_unfinished_event_counts_at_the_end_and_empty_ones_never() {
        let mut parser = Parser::default();
        assert_eq!(parser.feed(b"event: ping\n\ndata: last").unwrap(), []);
        assert_eq!(parser.finish().unwrap(), Some(event("", "last")));
        assert_eq!(Parser::default().finish().unwrap(), None);
    }

    #[test]
    fn a_line_without_end_cannot_exhaust_memory() {
        let mut parser = Parser::default();
        let chunk = vec![b'x'; 1 << 20];
        let error = (0..9).find_map(|_| parser.feed(&chunk).err()).unwrap();
        assert_eq!(error.reason(), Some("llm_error"));
    }
}

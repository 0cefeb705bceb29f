//! `tasklisp lsp`: a Language Server over stdio for `.sexp` and task `.xml` files.
//!
//! JSON-RPC is framed here (a `Content-Length` header, a JSON body) rather than by
//! `lsp-server`, whose reader thread stops at the first body that is not JSON, or
//! `tower-lsp`, which needs an async runtime tasklisp does not otherwise have: a
//! malformed message gets a parse error and the server reads on. Requests are answered
//! one at a time, in order; a request that panics is answered with an internal error.

mod document;
mod features;

use crate::eval::Limits;
use document::Documents;
use serde_json::{json, Value as Json};
use std::io::{BufRead, Write};

/// A message body larger than this is refused (read and dropped): a 10 MB file, escaped
/// as JSON, fits.
const MAX_MESSAGE: usize = 64 * 1024 * 1024;

/// What hover and completion say of the language's names: the REPL's `:describe` and
/// Tab completion, handed in by the command line.
#[derive(Clone, Copy)]
pub struct Help {
    pub describe: fn(&crate::eval::Interp, &str) -> String,
    pub names: fn(&crate::eval::Interp) -> Vec<String>,
}

/// Serves the protocol on stdin and stdout until `exit` or the end of input; returns
/// the exit status.
pub fn serve(limits: Limits, help: Help) -> i32 {
    let stdin = std::io::stdin();
    let stdout = std::io::stdout();
    serve_on(&mut stdin.lock(), &mut stdout.lock(), limits, help)
}

/// [`serve`] on any streams.
pub fn serve_on(
    input: &mut impl BufRead,
    output: &mut impl Write,
    limits: Limits,
    help: Help,
) -> i32 {
    let mut server = Server {
        documents: Documents::default(),
        limits,
        help,
        shutdown: false,
        output,
    };
    loop {
        match read_message(input) {
            Ok(None) => return 1,
            Ok(Some(Ok(message))) => {
                if message.get("method").and_then(Json::as_str) == Some("exit") {
                    return i32::from(!server.shutdown);
                }
                server.handle(&message);
            }
            Ok(Some(Err(why))) => server.send(&json!({
                "jsonrpc": "2.0",
                "id": null,
                "error": {"code": -32700, "message": why},
            })),
            Err(_) => return 1,
        }
    }
}

struct Server<'o, W: Write> {
    documents: Documents,
    limits: Limits,
    help: Help,
    shutdown: bool,
    output: &'o mut W,
}

impl<W: Write> Server<'_, W> {
    fn send(&mut self, message: &Json) {
        let body = message.to_string();
        let _ = write!(self.output, "Content-Length: {}\r\n\r\n{body}", body.len());
        let _ = self.output.flush();
    }

    fn handle(&mut self, message: &Json) {
        let method = message.get("method").and_then(Json::as_str).unwrap_or("");
        let params = message.get("params").cloned().unwrap_or(Json::Null);
        let id = message.get("id").cloned();
        let answer = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            self.dispatch(method, &params)
        }));
        let answer = match answer {
            Ok(answer) => answer,
            Err(_) => Err((-32603, format!("{method} failed inside the server"))),
        };
        let Some(id) = id else {
            return; // a notification: no answer
        };
        let reply = match answer {
            Ok(result) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
            Err((code, message)) => {
                json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
            }
        };
        self.send(&reply);
    }

    /// The answer to a request (or what a notification does, answered with nothing).
    fn dispatch(&mut self, method: &str, params: &Json) -> Result<Json, (i64, String)> {
        let uri = params
            .pointer("/textDocument/uri")
            .and_then(Json::as_str)
            .unwrap_or("")
            .to_owned();
        match method {
            "initialize" => Ok(features::capabilities()),
            "initialized" | "$/cancelRequest" | "$/setTrace" => Ok(Json::Null),
            "shutdown" => {
                self.shutdown = true;
                Ok(Json::Null)
            }
            "textDocument/didOpen" => {
                let text = params.pointer("/textDocument/text").and_then(Json::as_str);
                self.documents.open(&uri, text.unwrap_or(""));
                self.publish(&uri);
                Ok(Json::Null)
            }
            "textDocument/didChange" => {
                let changes = params.get("contentChanges").and_then(Json::as_array);
                let last = changes.and_then(|c| c.last());
                if let Some(text) = last.and_then(|c| c.get("text")).and_then(Json::as_str) {
                    self.documents.open(&uri, text);
                    self.publish(&uri);
                }
                Ok(Json::Null)
            }
            "textDocument/didSave" => {
                self.publish(&uri);
                Ok(Json::Null)
            }
            "textDocument/didClose" => {
                self.documents.close(&uri);
                self.send(&diagnostics_message(&uri, Vec::new()));
                Ok(Json::Null)
            }
            _ => self.request(method, &uri, params),
        }
    }

    /// Requests about an open document.
    fn request(&mut self, method: &str, uri: &str, params: &Json) -> Result<Json, (i64, String)> {
        let known = matches!(
            method,
            "textDocument/hover"
                | "textDocument/completion"
                | "textDocument/definition"
                | "textDocument/documentSymbol"
                | "textDocument/formatting"
        );
        if !known {
            return Err((-32601, format!("unknown method {method}")));
        }
        let Some(document) = self.documents.get(uri) else {
            return Ok(Json::Null);
        };
        let position = params.get("position");
        Ok(match method {
            "textDocument/hover" => features::hover(document, position, &self.limits, self.help),
            "textDocument/completion" => features::completion(document, &self.limits, self.help),
            "textDocument/definition" => features::definition(document, position),
            "textDocument/documentSymbol" => features::symbols(document),
            _ => features::formatting(document),
        })
    }

    fn publish(&mut self, uri: &str) {
        let Some(document) = self.documents.get(uri) else {
            return;
        };
        let diagnostics = features::diagnostics(document, &self.limits);
        self.send(&diagnostics_message(uri, diagnostics));
    }
}

fn diagnostics_message(uri: &str, diagnostics: Vec<Json>) -> Json {
    json!({
        "jsonrpc": "2.0",
        "method": "textDocument/publishDiagnostics",
        "params": {"uri": uri, "diagnostics": diagnostics},
    })
}

/// The longest header line read: a longer one is read past and its message refused.
const MAX_HEADER_LINE: usize = 8 * 1024;

/// The next message: `None` at the end of input, `Some(Err)` for one that is not JSON,
/// too large, or whose header is broken (a line not UTF-8 or too long, a length that is
/// not a number, lengths that disagree), which the caller answers and reads past.
fn read_message(input: &mut impl BufRead) -> std::io::Result<Option<Result<Json, String>>> {
    let mut length = None;
    let mut broken = None;
    loop {
        let Some(line) = read_header_line(input)? else {
            return Ok(None);
        };
        let header = match line {
            Ok(header) => header,
            Err(why) => {
                broken.get_or_insert(why);
                continue;
            }
        };
        if header.is_empty() {
            if length.is_some() || broken.is_some() {
                break;
            }
            continue; // blank lines between messages
        }
        if let Err(why) = read_length(&header, &mut length) {
            broken.get_or_insert(why);
        }
    }
    // A body whose length is known is read past, even when its header is broken.
    let length = length.unwrap_or(0);
    let mut body = std::io::Read::take(&mut *input, length as u64);
    if let Some(why) = broken {
        std::io::copy(&mut body, &mut std::io::sink())?;
        return Ok(Some(Err(why)));
    }
    if length > MAX_MESSAGE {
        std::io::copy(&mut body, &mut std::io::sink())?;
        return Ok(Some(Err(format!(
            "a message of {length} bytes is too large"
        ))));
    }
    let mut bytes = Vec::new();
    std::io::Read::read_to_end(&mut body, &mut bytes)?;
    Ok(Some(
        serde_json::from_slice(&bytes).map_err(|e| format!("not JSON: {e}")),
    ))
}

/// The `Content-Length` a header line gives, into `length`: a second one must agree.
fn read_length(header: &str, length: &mut Option<usize>) -> Result<(), String> {
    let Some((name, value)) = header.split_once(':') else {
        return Ok(());
    };
    if !name.trim().eq_ignore_ascii_case("content-length") {
        return Ok(());
    }
    let value = value.trim();
    let Ok(given) = value.parse::<usize>() else {
        *length = None;
        return Err(format!("Content-Length {value:?} is not a length"));
    };
    match *length {
        Some(before) if before != given => {
            *length = None;
            Err(format!("Content-Length given twice: {before} and {given}"))
        }
        _ => {
            *length = Some(given);
            Ok(())
        }
    }
}

/// One header line without its line break: `None` at the end of input, `Some(Err)` for
/// a line that is not UTF-8 or longer than [`MAX_HEADER_LINE`] (read past in pieces).
fn read_header_line(input: &mut impl BufRead) -> std::io::Result<Option<Result<String, String>>> {
    let mut line = Vec::new();
    let read = std::io::Read::take(&mut *input, MAX_HEADER_LINE as u64 + 1)
        .read_until(b'\n', &mut line)?;
    if read == 0 {
        return Ok(None);
    }
    if !line.ends_with(b"\n") && line.len() > MAX_HEADER_LINE {
        skip_line(input)?;
        return Ok(Some(Err(format!(
            "a header line longer than {MAX_HEADER_LINE} bytes"
        ))));
    }
    Ok(Some(match String::from_utf8(line) {
        Ok(text) => Ok(text.trim_end().to_owned()),
        Err(_) => Err("a header line that is not UTF-8".to_owned()),
    }))
}

/// Reads up to the next line break (or the end of input), holding none of it.
fn skip_line(input: &mut impl BufRead) -> std::io::Result<()> {
    loop {
        let buffer = input.fill_buf()?;
        if buffer.is_empty() {
            return Ok(());
        }
        match buffer.iter().position(|&b| b == b'\n') {
            Some(end) => {
                input.consume(end + 1);
                return Ok(());
            }
            None => {
                let all = buffer.len();
                input.consume(all);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn framed(body: &str) -> Vec<u8> {
        format!("Content-Length: {}\r\n\r\n{body}", body.len()).into_bytes()
    }

    const SHUTDOWN: &str = r#"{"jsonrpc":"2.0","id":7,"method":"shutdown"}"#;

    /// What the server answers to `input`, and its exit status.
    fn served(input: &[u8]) -> (Vec<Json>, i32) {
        let help = Help {
            describe: |_, _| String::new(),
            names: |_| Vec::new(),
        };
        let mut output = Vec::new();
        let status = serve_on(&mut &input[..], &mut output, Limits::default(), help);
        let mut answers = Vec::new();
        let mut rest = &output[..];
        while let Ok(Some(Ok(message))) = read_message(&mut rest) {
            answers.push(message);
        }
        (answers, status)
    }

    /// The server answered the bad message with a parse error, then the shutdown.
    fn refused_then_shut_down(bad: &[u8]) {
        let input = [bad, &framed(SHUTDOWN)].concat();
        let (answers, _) = served(&input);
        assert_eq!(answers.len(), 2, "{answers:?}");
        assert_eq!(answers[0]["error"]["code"], -32700, "{answers:?}");
        assert_eq!(answers[1]["id"], 7, "{answers:?}");
    }

    #[test]
    fn a_header_line_that_is_not_utf8_is_refused_and_the_server_reads_on() {
        refused_then_shut_down(b"Content-Length: 2\r\nX-Bad: \xff\xfe\r\n\r\n{}");
        refused_then_shut_down(b"\xff\r\n\r\n");
    }

    #[test]
    fn lengths_that_disagree_or_do_not_read_are_refused() {
        refused_then_shut_down(b"Content-Length: 2\r\nContent-Length: 3\r\n\r\n");
        refused_then_shut_down(b"Content-Length: 99999999999999999999999\r\n\r\n");
        refused_then_shut_down(b"Content-Length: -1\r\n\r\n");
        // The same length twice is one length.
        let twice = format!(
            "Content-Length: {0}\r\nContent-Length: {0}\r\n\r\n{SHUTDOWN}",
            SHUTDOWN.len()
        );
        let (answers, _) = served(twice.as_bytes());
        assert_eq!(answers[0]["id"], 7, "{answers:?}");
    }

    #[test]
    fn a_header_line_of_any_length_is_read_past() {
        let long = format!("X-Long: {}\r\n\r\n", "a".repeat(1 << 20));
        refused_then_shut_down(long.as_bytes());
    }

    #[test]
    fn a_body_too_large_is_read_past_without_being_held() {
        let length = MAX_MESSAGE + 1;
        let input = [
            format!("Content-Length: {length}\r\n\r\n").into_bytes(),
            vec![b' '; length],
        ]
        .concat();
        refused_then_shut_down(&input);
        // A length past the end of the input: the input ends, and so does the server.
        let (answers, status) = served(b"Content-Length: 18446744073709551615\r\n\r\n{}");
        assert_eq!((answers.len(), status), (1, 1), "{answers:?}");
    }
}

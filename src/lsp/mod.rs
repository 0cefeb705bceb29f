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

/// The next message: `None` at the end of input, `Some(Err)` for one that is not JSON
/// (or too large), which the caller answers and reads past.
fn read_message(input: &mut impl BufRead) -> std::io::Result<Option<Result<Json, String>>> {
    let mut length = None;
    let mut line = String::new();
    loop {
        line.clear();
        if input.read_line(&mut line)? == 0 {
            return Ok(None);
        }
        let header = line.trim_end();
        if header.is_empty() {
            if length.is_some() {
                break;
            }
            continue; // blank lines between messages
        }
        if let Some((name, value)) = header.split_once(':') {
            if name.trim().eq_ignore_ascii_case("content-length") {
                length = value.trim().parse::<usize>().ok();
            }
        }
    }
    let length = length.unwrap_or(0);
    let mut body = std::io::Read::take(&mut *input, length as u64);
    if length > MAX_MESSAGE {
        std::io::copy(&mut body, &mut std::io::sink())?;
        return Ok(Some(Err(format!(
            "a message of {length} bytes is too large"
        ))));
    }
    let mut bytes = Vec::new();
    std::io::Read::read_to_end(&mut body, &mut bytes)?;
    let body = bytes;
    Ok(Some(
        serde_json::from_slice(&body).map_err(|e| format!("not JSON: {e}")),
    ))
}

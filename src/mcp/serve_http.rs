//! `tasklisp mcp --http PORT`: the server over streamable HTTP at
//! `http://127.0.0.1:PORT/mcp` (tiny_http). Every POST carries one message and is
//! answered with one JSON body (`202 Accepted` for a notification); the server keeps no
//! sessions and opens no event streams, so `GET` is `405`. Only this machine can reach
//! it, and a browser page from elsewhere is refused by its `Origin`.

use super::protocol::MAX_MESSAGE_BYTES;
use super::server::{answer_bytes, too_large};
use crate::error::{Error, Result};
use crate::eval::Interp;
use std::io::Read;
use tiny_http::{Header, Method, Request, Response, Server};

/// The one path served.
const PATH: &str = "/mcp";

pub fn serve(interp: &Interp, port: u16) -> Result<i32> {
    let server = Server::http(("127.0.0.1", port))
        .map_err(|e| Error::eval(format!("mcp: cannot listen on 127.0.0.1:{port}: {e}")))?;
    let port = server
        .server_addr()
        .to_ip()
        .map_or(port, |address| address.port());
    eprintln!("tasklisp: serving MCP at http://127.0.0.1:{port}{PATH}");
    for request in server.incoming_requests() {
        reply(interp, request);
    }
    Ok(0)
}

/// Answers one HTTP request; a client that went away meanwhile is not an error.
fn reply(interp: &Interp, mut request: Request) {
    let response = match (request.method(), path(request.url())) {
        _ if !local_origin(&request) => plain(403, "the Origin is not this machine"),
        (Method::Post, PATH) => match read_body(&mut request) {
            Some(bytes) => match answer_bytes(interp, &bytes) {
                Some(answer) => json(200, &answer.to_string()),
                None => plain(202, ""),
            },
            None => json(413, &too_large().to_string()),
        },
        (_, PATH) => with_header(plain(405, "POST a JSON-RPC message"), "Allow", "POST"),
        _ => plain(404, "MCP is served at /mcp"),
    };
    let _ = request.respond(response);
}

fn path(url: &str) -> &str {
    url.split('?').next().unwrap_or(url)
}

/// The body, unless it is over `MAX_MESSAGE_BYTES`.
fn read_body(request: &mut Request) -> Option<Vec<u8>> {
    let mut bytes = Vec::new();
    let limit = MAX_MESSAGE_BYTES as u64 + 1;
    request
        .as_reader()
        .take(limit)
        .read_to_end(&mut bytes)
        .ok()?;
    (bytes.len() <= MAX_MESSAGE_BYTES).then_some(bytes)
}

/// No `Origin` (a program), or a page served from this machine.
fn local_origin(request: &Request) -> bool {
    let origin = request
        .headers()
        .iter()
        .find(|h| h.field.equiv("Origin"))
        .map(|h| h.value.as_str().to_ascii_lowercase());
    let Some(origin) = origin else {
        return true;
    };
    let host = origin.split("://").nth(1).unwrap_or("");
    let host = host.rsplit_once(':').map_or(host, |(host, _)| host);
    matches!(host, "127.0.0.1" | "localhost" | "[::1]")
}

type Reply = Response<std::io::Cursor<Vec<u8>>>;

fn json(status: u16, body: &str) -> Reply {
    with_header(plain(status, body), "Content-Type", "application/json")
}

fn plain(status: u16, text: &str) -> Reply {
    Response::from_string(text).with_status_code(status)
}

fn with_header(mut response: Reply, name: &str, value: &str) -> Reply {
    if let Ok(header) = Header::from_bytes(name.as_bytes(), value.as_bytes()) {
        response.add_header(header);
    }
    response
}

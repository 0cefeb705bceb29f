//! The streamable HTTP transport, client side: each message is POSTed to the server's
//! one URL; a request is answered with one JSON body or a stream of server-sent events
//! holding the answer. The server's `Mcp-Session-Id` is sent back on every later POST,
//! with the agreed `MCP-Protocol-Version`. Each POST runs on a thread of its own, which
//! puts what comes back in the client's inbox.

use super::protocol::MAX_MESSAGE_BYTES;
use super::transport::{Inbox, Incoming, Transport, Until};
use crate::provider::http::excerpt;
use crate::provider::sse::Parser;
use serde_json::Value as Json;
use std::io::Read;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

pub struct Http {
    url: String,
    agent: ureq::Agent,
    headers: Arc<Mutex<Headers>>,
    inbox: Arc<Inbox>,
}

/// What the server told us to send back.
#[derive(Default, Clone)]
struct Headers {
    session: Option<String>,
    version: Option<String>,
}

impl Http {
    /// A transport to `url` whose answers arrive in `inbox`; one exchange may take
    /// `timeout`.
    pub fn new(url: &str, timeout: Duration, inbox: Arc<Inbox>) -> Http {
        let mut config = ureq::Agent::config_builder();
        if is_loopback(url) {
            config = config.proxy(None);
        }
        let config = config
            .http_status_as_error(false)
            .max_redirects(0)
            .max_redirects_will_error(false)
            .timeout_global(Some(timeout))
            .build();
        Http {
            url: url.to_owned(),
            agent: ureq::Agent::new_with_config(config),
            headers: Arc::default(),
            inbox,
        }
    }

    fn headers(&self) -> Headers {
        self.headers
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

fn is_loopback(url: &str) -> bool {
    let Ok(uri) = url.parse::<ureq::http::Uri>() else {
        return false;
    };
    matches!(
        uri.host(),
        Some("127.0.0.1" | "localhost" | "[::1]" | "::1")
    )
}

impl Transport for Http {
    /// Each POST runs on a thread of its own within the agent's timeout: `send` itself
    /// never waits.
    fn send(&self, message: &Json, _: &Until) -> Result<(), String> {
        let id = message.get("id").and_then(Json::as_u64);
        let exchange = Exchange {
            agent: self.agent.clone(),
            url: self.url.clone(),
            sent: self.headers(),
            learned: self.headers.clone(),
            inbox: self.inbox.clone(),
            id,
        };
        let payload = message.to_string().into_bytes();
        std::thread::Builder::new()
            .name("tasklisp-mcp-post".into())
            .spawn(move || exchange.run(&payload))
            .map(drop)
            .map_err(|e| format!("cannot start a request: {e}"))
    }

    fn agreed(&self, version: &str) {
        let mut headers = self.headers.lock().unwrap_or_else(PoisonError::into_inner);
        headers.version = Some(version.to_owned());
    }

    /// Tells the server the session is over (a server without sessions needs nothing).
    fn close(&self) {
        let Some(session) = self.headers().session else {
            return;
        };
        let _ = self
            .agent
            .delete(&self.url)
            .header("mcp-session-id", &session)
            .call();
    }
}

/// One POST and what it brings back.
struct Exchange {
    agent: ureq::Agent,
    url: String,
    sent: Headers,
    learned: Arc<Mutex<Headers>>,
    inbox: Arc<Inbox>,
    id: Option<u64>,
}

impl Exchange {
    fn run(self, payload: &[u8]) {
        let mut request = self
            .agent
            .post(&self.url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream");
        if let Some(session) = &self.sent.session {
            request = request.header("mcp-session-id", session);
        }
        if let Some(version) = &self.sent.version {
            request = request.header("mcp-protocol-version", version);
        }
        let response = match request.send(payload) {
            Ok(response) => response,
            Err(e) => return self.fail(format!("the request failed: {e}")),
        };
        let status = response.status().as_u16();
        if let Some(session) = header(&response, "mcp-session-id") {
            let mut learned = self.learned.lock().unwrap_or_else(PoisonError::into_inner);
            learned.session = Some(session);
        }
        let events = header(&response, "content-type")
            .is_some_and(|t| t.trim_start().starts_with("text/event-stream"));
        // A stream may carry notifications besides the answer; each event is bounded too.
        let limit = if events { 4 } else { 1 } * MAX_MESSAGE_BYTES as u64 + 1;
        let mut body = response
            .into_body()
            .into_with_config()
            .limit(limit)
            .reader();
        match status {
            202 => {}
            200..=299 if events => self.forward_events(&mut body),
            200..=299 => self.forward_body(&mut body),
            _ => {
                let mut text = Vec::new();
                let _ = body.take(4096).read_to_end(&mut text);
                let text = String::from_utf8_lossy(&text);
                self.fail(format!(
                    "HTTP status {status}: {}",
                    excerpt(text.trim(), 500)
                ));
            }
        }
    }

    fn fail(&self, message: String) {
        self.inbox.put(Incoming::Failed(self.id, message), 0);
    }

    fn forward_body(&self, body: &mut impl Read) {
        let mut bytes = Vec::new();
        match body.read_to_end(&mut bytes) {
            Ok(_) if bytes.len() > MAX_MESSAGE_BYTES => self.inbox.put(Incoming::TooLarge, 0),
            Ok(_) => self.inbox.deliver(&bytes),
            Err(e) if e.to_string().contains("limit") => self.inbox.put(Incoming::TooLarge, 0),
            Err(e) => self.fail(format!("cannot read the answer: {e}")),
        }
    }

    /// Hands over each event's data until the stream ends (the server ends it once it
    /// has answered).
    fn forward_events(&self, body: &mut impl Read) {
        let mut parser = Parser::default();
        let mut buffer = vec![0u8; 16 << 10];
        loop {
            let read = match body.read(&mut buffer) {
                Ok(0) => return,
                Ok(read) => read,
                Err(e) => return self.fail(format!("the event stream broke: {e}")),
            };
            let events = match parser.feed(buffer.get(..read).unwrap_or_default()) {
                Ok(events) => events,
                Err(_) => return self.inbox.put(Incoming::TooLarge, 0),
            };
            for event in events.into_iter().filter(|e| !e.data.is_empty()) {
                self.inbox.deliver(event.data.as_bytes());
            }
        }
    }
}

fn header(response: &ureq::http::Response<ureq::Body>, name: &str) -> Option<String> {
    let value = response.headers().get(name)?.to_str().ok()?;
    Some(value.to_owned())
}

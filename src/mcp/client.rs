//! An MCP client connection: the `initialize` handshake, requests matched to their
//! answers by id, and every way a server can fail turned into a `TASK_FAILURE` naming
//! it. A request waits at most the connection's timeout; the wait checks for Ctrl-C.

use super::protocol::{self, classify, Message, HANDSHAKE_VERSIONS};
use super::transport::{Incoming, Transport};
use crate::error::{Error, Reason, Result};
use crate::provider::http::excerpt;
use serde_json::{json, Value as Json};
use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::sync::{Mutex, OnceLock, PoisonError};
use std::time::{Duration, Instant};

/// How long a request waits for its answer unless `mcp-connect` says otherwise.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);

/// The longest pause between two checks for Ctrl-C while waiting.
const POLL: Duration = Duration::from_millis(50);

/// Pages of a listing read at most (`tools/list` and the like are paginated).
const MAX_PAGES: usize = 100;

/// Checks for an interruption while waiting (the interpreter's Ctrl-C flag).
pub type Interrupted<'a> = &'a dyn Fn() -> Result<()>;

/// Answers read by one waiter for another (several `pmap` items may wait on one
/// connection): kept for the requests still waited for, dropped for the others.
#[derive(Default)]
struct Answers {
    waiting: HashSet<u64>,
    arrived: HashMap<u64, Arrived>,
}

/// What arrived for a request: its result, the server's refusal (code and message), or
/// a failure on the way.
enum Arrived {
    Result(Json),
    Refused(i64, String),
    Failed(String),
}

pub struct Client {
    /// The name given to `mcp-connect`: tool tasks are `NAME/tool`, errors name it.
    pub name: String,
    transport: Box<dyn Transport>,
    /// Read by whichever waiter holds it, for one poll at a time.
    incoming: Mutex<Receiver<Incoming>>,
    answers: Mutex<Answers>,
    next_id: AtomicU64,
    timeout: Duration,
    /// Why the server is gone, once it is.
    gone: Mutex<Option<String>>,
    /// The `initialize` answer, with the version agreed.
    pub server: OnceLock<Json>,
}

impl Client {
    /// Connects over `transport`, whose messages arrive on `incoming`, and shakes hands.
    pub fn connect(
        name: &str,
        transport: Box<dyn Transport>,
        incoming: Receiver<Incoming>,
        timeout: Duration,
        interrupted: Interrupted,
    ) -> Result<Client> {
        let client = Client {
            name: name.to_owned(),
            transport,
            incoming: Mutex::new(incoming),
            answers: Mutex::default(),
            next_id: AtomicU64::new(1),
            timeout,
            gone: Mutex::new(None),
            server: OnceLock::new(),
        };
        let offer = json!({
            "protocolVersion": HANDSHAKE_VERSIONS[0],
            "capabilities": {},
            "clientInfo": protocol::implementation(),
        });
        let answer = client.request("initialize", offer, interrupted)?;
        let version = answer.get("protocolVersion").and_then(Json::as_str);
        let Some(version) = HANDSHAKE_VERSIONS.iter().find(|v| Some(**v) == version) else {
            return Err(client.failure(format!(
                "speaks MCP version {}; tasklisp speaks {}",
                version.unwrap_or("(none given)"),
                HANDSHAKE_VERSIONS.join(" and ")
            )));
        };
        client.transport.agreed(version);
        client.notify("notifications/initialized", json!({}))?;
        let _ = client.server.set(answer);
        Ok(client)
    }

    /// The protocol version agreed with the server.
    pub fn version(&self) -> &str {
        self.server
            .get()
            .and_then(|s| s.get("protocolVersion"))
            .and_then(Json::as_str)
            .unwrap_or("")
    }

    /// A `TASK_FAILURE` naming the server.
    pub fn failure(&self, message: String) -> Error {
        failure_of(&self.name, Reason::ToolExecutionError, message)
    }

    /// Sends a request and waits for its answer's `result`.
    pub fn request(&self, method: &str, params: Json, interrupted: Interrupted) -> Result<Json> {
        if let Some(why) = self.gone() {
            return Err(self.failure(format!("the server is gone ({why}); cannot send {method}")));
        }
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        self.answers().waiting.insert(id);
        let answer = self
            .transport
            .send(&protocol::request(id, method, params))
            .map_err(|e| self.failure(format!("{method}: {e}")))
            .and_then(|()| self.wait_for(id, method, interrupted));
        let mut answers = self.answers();
        answers.waiting.remove(&id);
        answers.arrived.remove(&id);
        answer
    }

    fn answers(&self) -> std::sync::MutexGuard<'_, Answers> {
        self.answers.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Keeps an answer read for another waiter, if it still waits.
    fn hand_over(&self, id: u64, answer: Arrived) {
        let mut answers = self.answers();
        if answers.waiting.contains(&id) {
            answers.arrived.insert(id, answer);
        }
    }

    /// Sends a message that expects no answer.
    pub fn notify(&self, method: &str, params: Json) -> Result<()> {
        self.transport
            .send(&protocol::notification(method, params))
            .map_err(|e| self.failure(format!("{method}: {e}")))
    }

    /// Every item of a paginated listing (`tools/list` → `tools`).
    pub fn list(&self, method: &str, key: &str, interrupted: Interrupted) -> Result<Vec<Json>> {
        let mut items = Vec::new();
        let mut cursor: Option<String> = None;
        for _ in 0..MAX_PAGES {
            let params = match &cursor {
                Some(cursor) => json!({"cursor": cursor}),
                None => json!({}),
            };
            let page = self.request(method, params, interrupted)?;
            match page.get(key) {
                Some(Json::Array(more)) => items.extend(more.iter().cloned()),
                _ => return Err(self.failure(format!("answered {method} without a `{key}` list"))),
            }
            cursor = page
                .get("nextCursor")
                .and_then(Json::as_str)
                .map(str::to_owned);
            if cursor.is_none() {
                return Ok(items);
            }
        }
        Err(self.failure(format!("{method} went on past {MAX_PAGES} pages")))
    }

    /// Ends the connection; later requests fail naming why.
    pub fn close(&self) {
        self.set_gone("the connection was closed".into());
        self.transport.close();
    }

    fn gone(&self) -> Option<String> {
        self.gone
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    fn set_gone(&self, why: String) {
        let mut gone = self.gone.lock().unwrap_or_else(PoisonError::into_inner);
        gone.get_or_insert(why);
    }

    /// Reads what arrives until the answer to `id`: requests from the server are
    /// answered, notifications skipped, answers to other waiters handed over.
    fn wait_for(&self, id: u64, method: &str, interrupted: Interrupted) -> Result<Json> {
        let deadline = Instant::now() + self.timeout;
        loop {
            let arrived = self.answers().arrived.remove(&id);
            if let Some(arrived) = arrived {
                return self.outcome(method, arrived);
            }
            if let Err(e) = interrupted() {
                self.cancel(id, "interrupted");
                return Err(e);
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                self.cancel(id, "timed out");
                return Err(self.timed_out(method));
            }
            let received = self
                .incoming
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .recv_timeout(left.min(POLL));
            let message = match received {
                Ok(message) => message,
                Err(RecvTimeoutError::Timeout) => continue,
                Err(RecvTimeoutError::Disconnected) => {
                    let why = self.gone().unwrap_or_else(|| "the connection ended".into());
                    return Err(self.failure(format!("{why} before answering {method}")));
                }
            };
            if let Some(answer) = self.answer_to(id, method, message)? {
                return Ok(answer);
            }
        }
    }

    /// The answer to `id` if `message` is it.
    fn answer_to(&self, id: u64, method: &str, message: Incoming) -> Result<Option<Json>> {
        match message {
            Incoming::Message(json) => self.read_message(id, method, &json),
            Incoming::Garbage(text) => Err(self.failure(format!(
                "answered {method} with something that is not JSON-RPC: {text}"
            ))),
            Incoming::TooLarge => Err(self.failure(format!(
                "sent a message over the limit of {} MiB while answering {method}",
                protocol::MAX_MESSAGE_BYTES >> 20
            ))),
            Incoming::Failed(failed, why) if failed.is_none_or(|f| f == id) => {
                Err(self.failure(format!("{method}: {why}")))
            }
            Incoming::Failed(Some(other), why) => {
                self.hand_over(other, Arrived::Failed(why));
                Ok(None)
            }
            Incoming::Failed(None, _) => Ok(None),
            Incoming::Closed(why) => {
                self.set_gone(why.clone());
                Err(self.failure(format!("the server {why} before answering {method}")))
            }
        }
    }

    fn read_message(&self, id: u64, method: &str, json: &Json) -> Result<Option<Json>> {
        match classify(json) {
            Message::Response {
                id: answered,
                outcome,
            } => {
                let arrived = match outcome {
                    Ok(result) => Arrived::Result(result.clone()),
                    Err((code, message)) => Arrived::Refused(code, message),
                };
                match answered.as_u64() {
                    Some(answered) if answered == id => self.outcome(method, arrived).map(Some),
                    Some(other) => {
                        self.hand_over(other, arrived);
                        Ok(None)
                    }
                    None => Ok(None),
                }
            }
            // A program that echoes its input (`cat`) sends our own request back.
            Message::Request {
                id: asked,
                method: echoed,
                ..
            } if echoed == method && asked.as_u64() == Some(id) => Err(self.failure(format!(
                "the program echoed the {method} request instead of answering it: \
                 it is not an MCP server"
            ))),
            Message::Request { id, method, .. } => {
                self.answer_server(id, method);
                Ok(None)
            }
            Message::Notification { .. } => Ok(None),
            Message::Invalid => Err(self.failure(format!(
                "answered {method} with something that is not JSON-RPC: {}",
                excerpt(&json.to_string(), 200)
            ))),
        }
    }

    /// What the caller of `method` gets of what arrived.
    fn outcome(&self, method: &str, arrived: Arrived) -> Result<Json> {
        match arrived {
            Arrived::Result(result) => Ok(result),
            Arrived::Refused(code, message) => Err(self.failure(format!(
                "refused {method}: {} (JSON-RPC error {code})",
                excerpt(&message, 1000)
            ))),
            Arrived::Failed(why) => Err(self.failure(format!("{method}: {why}"))),
        }
    }

    /// A server's own requests: `ping` is answered, the rest refused (tasklisp offers
    /// no sampling, roots or elicitation).
    fn answer_server(&self, id: &Json, method: &str) {
        let answer = match method {
            "ping" => protocol::result(id, json!({})),
            _ => protocol::error(id, protocol::METHOD_NOT_FOUND, "not offered by tasklisp"),
        };
        let _ = self.transport.send(&answer);
    }

    fn cancel(&self, id: u64, why: &str) {
        let params = json!({"requestId": id, "reason": why});
        let _ = self.notify("notifications/cancelled", params);
    }

    fn timed_out(&self, method: &str) -> Error {
        failure_of(
            &self.name,
            Reason::ExecutionTimeout,
            format!(
                "no answer to {method} within {} s (mcp-connect's :timeout)",
                self.timeout.as_secs_f64()
            ),
        )
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        self.transport.close();
    }
}

/// A `TASK_FAILURE` naming the server `name` (also in `details.server`).
pub fn failure_of(name: &str, reason: Reason, message: String) -> Error {
    Error::task_failure(reason, format!("MCP server `{name}`: {message}"))
        .with_detail("server", Json::from(name))
}

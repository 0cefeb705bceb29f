//! An MCP client connection: the `initialize` handshake, requests matched to their
//! answers by id, and every way a server can fail turned into a `TASK_FAILURE` naming
//! it. A request waits at most the connection's timeout, its writes included; the wait
//! checks for Ctrl-C. The server's own requests (`ping`) are answered, a bounded number
//! per request.

use super::protocol::{self, classify, Message, HANDSHAKE_VERSIONS};
use super::transport::{Inbox, Incoming, Transport, Until, POLL};
use crate::error::{Error, Reason, Result};
use crate::provider::http::excerpt;
use serde_json::{json, Value as Json};
use std::cell::Cell;
use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::Duration;

/// How long a request waits for its answer unless `mcp-connect` says otherwise.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);

/// Pages of a listing read at most (`tools/list` and the like are paginated).
const MAX_PAGES: usize = 100;
/// Items of a listing kept at most, and their size on the wire.
const MAX_ITEMS: usize = 10_000;
const MAX_LISTING_BYTES: usize = 4 * protocol::MAX_MESSAGE_BYTES;

/// The server's own requests answered at most while one request waits; past it they
/// are left unanswered (a server flooding us with `ping`s gets no more of our time).
const MAX_SERVER_REQUESTS: usize = 100;

/// How long telling the server a request is cancelled may wait.
const CANCEL_GRACE: Duration = Duration::from_millis(200);

/// Checks for an interruption while waiting (the interpreter's Ctrl-C flag).
pub type Interrupted<'a> = &'a dyn Fn() -> Result<()>;

/// Answers read by one waiter for another (several `pmap` items may wait on one
/// connection): kept for the requests still waited for, dropped for the others.
#[derive(Default)]
struct Answers {
    waiting: HashSet<u64>,
    arrived: HashMap<u64, Arrived>,
}

/// One request being waited for: its id and method, until when, and how many of the
/// server's own requests were answered meanwhile.
struct Call<'a> {
    id: u64,
    method: &'a str,
    until: Until<'a>,
    answered: Cell<usize>,
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
    /// What the server sent, read by whichever waiter comes first.
    incoming: Arc<Inbox>,
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
        incoming: Arc<Inbox>,
        timeout: Duration,
        interrupted: Interrupted,
    ) -> Result<Client> {
        let client = Client {
            name: name.to_owned(),
            transport,
            incoming,
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
        let until = Until::after(client.timeout, interrupted);
        client.notify("notifications/initialized", json!({}), &until)?;
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
        let call = Call {
            id: self.next_id.fetch_add(1, Ordering::Relaxed),
            method,
            until: Until::after(self.timeout, interrupted),
            answered: Cell::new(0),
        };
        let id = call.id;
        self.answers().waiting.insert(id);
        let answer = self
            .transport
            .send(&protocol::request(id, method, params), &call.until)
            .map_err(|why| self.not_sent(method, why, &call.until))
            .and_then(|()| self.wait_for(&call));
        let mut answers = self.answers();
        answers.waiting.remove(&id);
        answers.arrived.remove(&id);
        answer
    }

    /// Why `method` could not be sent: Ctrl-C, the timeout, or a broken connection.
    fn not_sent(&self, method: &str, why: String, until: &Until) -> Error {
        if let Err(interrupted) = (until.interrupted)() {
            return interrupted;
        }
        let reason = match until.left().is_zero() {
            true => Reason::ExecutionTimeout,
            false => Reason::ToolExecutionError,
        };
        failure_of(&self.name, reason, format!("{method}: {why}"))
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
    fn notify(&self, method: &str, params: Json, until: &Until) -> Result<()> {
        self.transport
            .send(&protocol::notification(method, params), until)
            .map_err(|why| self.not_sent(method, why, until))
    }

    /// Every item of a paginated listing (`tools/list` → `tools`).
    pub fn list(&self, method: &str, key: &str, interrupted: Interrupted) -> Result<Vec<Json>> {
        let mut items = Vec::new();
        let mut bytes = 0;
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
            bytes += page.to_string().len();
            if items.len() > MAX_ITEMS || bytes > MAX_LISTING_BYTES {
                return Err(self.failure(format!(
                    "{method} went on past {MAX_ITEMS} {key} or {} MiB",
                    MAX_LISTING_BYTES >> 20
                )));
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

    /// Reads what arrives until the answer to the call: requests from the server are
    /// answered, notifications skipped, answers to other waiters handed over.
    fn wait_for(&self, call: &Call) -> Result<Json> {
        let (id, method) = (call.id, call.method);
        loop {
            let arrived = self.answers().arrived.remove(&id);
            if let Some(arrived) = arrived {
                return self.outcome(method, arrived);
            }
            if let Err(e) = (call.until.interrupted)() {
                self.cancel(id, "interrupted");
                return Err(e);
            }
            let left = call.until.left();
            if left.is_zero() {
                self.cancel(id, "timed out");
                return Err(self.timed_out(method));
            }
            let Some(message) = self.incoming.take(left.min(POLL)) else {
                continue;
            };
            if let Some(answer) = self.answer_to(call, message)? {
                return Ok(answer);
            }
        }
    }

    /// The answer to the call if `message` is it.
    fn answer_to(&self, call: &Call, message: Incoming) -> Result<Option<Json>> {
        let (id, method) = (call.id, call.method);
        match message {
            Incoming::Message(json) => self.read_message(call, &json),
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

    fn read_message(&self, call: &Call, json: &Json) -> Result<Option<Json>> {
        let (id, method) = (call.id, call.method);
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
                self.answer_server(call, id, method);
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

    /// A server's own requests while `call` waits: `ping` is answered, the rest refused
    /// (tasklisp offers no sampling, roots or elicitation); past `MAX_SERVER_REQUESTS`
    /// none is.
    fn answer_server(&self, call: &Call, id: &Json, method: &str) {
        let answered = call.answered.get();
        if answered >= MAX_SERVER_REQUESTS {
            return;
        }
        call.answered.set(answered + 1);
        let answer = match method {
            "ping" => protocol::result(id, json!({})),
            _ => protocol::error(id, protocol::METHOD_NOT_FOUND, "not offered by tasklisp"),
        };
        let _ = self.transport.send(&answer, &call.until);
    }

    /// Tells the server a request is given up, waiting a moment at most.
    fn cancel(&self, id: u64, why: &str) {
        let params = json!({"requestId": id, "reason": why});
        let until = Until::after(CANCEL_GRACE, &|| Ok(()));
        let _ = self.notify("notifications/cancelled", params, &until);
    }

    fn timed_out(&self, method: &str) -> Error {
        let dropped = match self.incoming.dropped() {
            0 => String::new(),
            n => format!("; {n} messages it sent were dropped unread (too many at once)"),
        };
        failure_of(
            &self.name,
            Reason::ExecutionTimeout,
            format!(
                "no answer to {method} within {} s (mcp-connect's :timeout){dropped}",
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

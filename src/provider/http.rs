//! The HTTP side of the model providers: one JSON POST with timeouts, bounded retries
//! with backoff, cancellation, and errors that never carry an API key.
//!
//! Each attempt runs on its own short-lived thread so the calling thread can watch the
//! `Cancel` and the attempt's deadline every 50 ms: Ctrl-C, a task's `:timeout` or the
//! provider's `timeout` ends the call at once, even while a model is still generating
//! or a server dribbles its answer a byte at a time. An abandoned attempt ends by
//! itself at its next read.

use crate::error::{Error, Reason, Result};
use crate::interrupt::Cancel;
use crate::secrets::Secrets;
use serde_json::{json, Value as Json};
use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};
use std::io::Read;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How often a waiting call looks at its `Cancel`.
const POLL: Duration = Duration::from_millis(50);
/// Error details keep at most this much of a response body.
pub const EXCERPT_BYTES: usize = 2048;
/// A response body larger than this is refused (no chat completion is this big).
pub const MAX_RESPONSE_BYTES: u64 = 32 * 1024 * 1024;
/// A call waits at most this long in all between its attempts: a `Retry-After` or a
/// backoff that would wait past it ends the call instead.
pub const MAX_WAIT_PER_CALL: Duration = Duration::from_secs(120);
/// An attempt gets this much time beyond its timeout for each MiB it sends or receives.
const TIME_PER_MIB: Duration = Duration::from_secs(1);
const MIB: f64 = (1u64 << 20) as f64;

/// Timeouts and the retry policy of one provider.
#[derive(Clone, Debug, PartialEq)]
pub struct HttpSettings {
    pub connect_timeout: Duration,
    /// The longest one attempt may take, from connecting to the last byte of the
    /// answer, streamed or not, plus a second for each MiB the attempt moves (a batch
    /// file of hundreds of megabytes). Keep-alives and a server's trickle gain nothing.
    pub timeout: Duration,
    /// Attempts after the first one, on 429, 5xx, timeouts and dropped connections.
    pub max_retries: u32,
    /// The first backoff; each retry doubles it, up to `backoff_max`, with jitter.
    pub backoff_base: Duration,
    pub backoff_max: Duration,
}

impl Default for HttpSettings {
    fn default() -> Self {
        HttpSettings {
            connect_timeout: Duration::from_secs(10),
            timeout: Duration::from_secs(300),
            max_retries: 3,
            backoff_base: Duration::from_millis(500),
            backoff_max: Duration::from_secs(30),
        }
    }
}

/// Where an HTTP provider sends its requests and with what. Deliberately not `Debug`:
/// it holds the API key.
#[derive(Clone, Default)]
pub struct Endpoint {
    pub base_url: String,
    pub api_key: Option<String>,
    /// The model when the task names none (`--model`, `"model"`).
    pub model: Option<String>,
    pub http: HttpSettings,
}

impl Endpoint {
    /// `base_url` joined with `path` by exactly one `/`.
    pub fn url(&self, path: &str) -> String {
        format!(
            "{}/{}",
            self.base_url.trim_end_matches('/'),
            path.trim_start_matches('/')
        )
    }

    /// The endpoint with `model` as its model when none is configured.
    pub fn with_default_model(mut self, model: &str) -> Endpoint {
        self.model.get_or_insert_with(|| model.to_owned());
        self
    }

    /// The task's `:model`, else the configured one; servers need one.
    pub fn model_for(&self, provider: &str, request: &super::Request) -> Result<String> {
        request.model.clone().or_else(|| self.model.clone()).ok_or_else(|| {
            Error::task_failure(
                Reason::LlmError,
                format!("{provider}: no model given: pass --model, set TASKLISP_MODEL, or give the task :model"),
            )
        })
    }

    /// A client that keeps this endpoint's key out of its errors. A server on this
    /// machine is reached directly: a proxy could not reach it.
    pub fn client(&self, provider: &'static str) -> HttpClient {
        HttpClient::new(
            provider,
            self.http.clone(),
            self.secrets(),
            is_loopback(&self.base_url),
        )
    }

    /// What must never be shown or written: the key and the base URL's credentials.
    pub fn secrets(&self) -> Secrets {
        Secrets::new(self.api_key.iter().cloned()).with(&Secrets::of_url(&self.base_url))
    }
}

/// Whether `url` names this machine (`localhost`, `127.x.x.x`, `[::1]`).
fn is_loopback(url: &str) -> bool {
    let Ok(uri) = url.parse::<ureq::http::Uri>() else {
        return false;
    };
    match uri.host() {
        Some(host) => {
            host.eq_ignore_ascii_case("localhost")
                || host == "[::1]"
                || host
                    .parse::<std::net::Ipv4Addr>()
                    .is_ok_and(|ip| ip.is_loopback())
        }
        None => false,
    }
}

/// A JSON-over-HTTP client that knows the secrets it must keep out of its errors.
pub struct HttpClient {
    /// The provider's name, which starts every error message.
    provider: &'static str,
    agent: ureq::Agent,
    settings: HttpSettings,
    secrets: Secrets,
}

/// What one attempt brought back from the server.
struct Reply {
    status: u16,
    retry_after: Option<Duration>,
    body: Vec<u8>,
}

/// What to send: the method, and for a POST its content type and payload. The payload
/// is shared with the thread that sends it rather than copied: a batch file may be
/// hundreds of megabytes.
pub enum Body {
    Get,
    Post {
        content_type: String,
        payload: Arc<Vec<u8>>,
    },
}

impl Body {
    pub fn json(value: &Json) -> Body {
        Body::Post {
            content_type: "application/json".into(),
            payload: Arc::new(value.to_string().into_bytes()),
        }
    }
}

impl Body {
    /// The bytes it sends.
    fn len(&self) -> usize {
        match self {
            Body::Get => 0,
            Body::Post { payload, .. } => payload.len(),
        }
    }
}

/// The clock of one attempt, shared by the thread doing the exchange (which counts the
/// bytes) and the caller watching it: the attempt may take its timeout plus
/// `TIME_PER_MIB` for each MiB moved.
#[derive(Clone)]
struct AttemptClock {
    start: Instant,
    timeout: Duration,
    moved: Arc<AtomicU64>,
}

impl AttemptClock {
    /// Starts the clock of an attempt that sends `sending` bytes.
    fn start(timeout: Duration, sending: usize) -> AttemptClock {
        AttemptClock {
            start: Instant::now(),
            timeout,
            moved: Arc::new(AtomicU64::new(sending as u64)),
        }
    }

    fn count(&self, bytes: usize) {
        self.moved.fetch_add(bytes as u64, Ordering::Relaxed);
    }

    /// How long the attempt may take, given what it has moved so far.
    fn limit(&self) -> Duration {
        let mib = self.moved.load(Ordering::Relaxed) as f64 / MIB;
        self.timeout.saturating_add(TIME_PER_MIB.mul_f64(mib))
    }

    fn expired(&self) -> bool {
        self.start.elapsed() > self.limit()
    }

    /// The error an attempt past its limit ends with.
    fn timed_out() -> ureq::Error {
        ureq::Error::Timeout(ureq::Timeout::Global)
    }
}

/// The verdict on one attempt.
enum Outcome {
    Done(Vec<u8>),
    Retry(Error, Option<Duration>),
    Fail(Error),
}

impl HttpClient {
    /// `direct` skips any proxy from the environment (for servers on this machine).
    pub fn new(
        provider: &'static str,
        settings: HttpSettings,
        secrets: Secrets,
        direct: bool,
    ) -> HttpClient {
        let mut config = ureq::Agent::config_builder();
        if direct {
            config = config.proxy(None);
        }
        // Redirects are answered, not followed: a model API does not redirect, a
        // redirect to another origin would take the request elsewhere, and ureq 3.5
        // panics on a redirect whose chunked body ends early (a fuzz finding).
        let config = config
            .http_status_as_error(false)
            .max_redirects(0)
            .max_redirects_will_error(false)
            .timeout_connect(Some(settings.connect_timeout))
            // The attempt's clock is the real bound; these end an abandoned attempt's
            // thread soon after it, however the server stalls.
            .timeout_recv_response(Some(settings.timeout))
            .timeout_per_read(Some(settings.timeout))
            .timeout_per_write(Some(settings.timeout))
            .build();
        HttpClient {
            provider,
            agent: ureq::Agent::new_with_config(config),
            settings,
            secrets,
        }
    }

    /// POSTs `body` as JSON and returns the JSON of a 2xx response.
    pub fn post_json(
        &self,
        url: &str,
        headers: &[(&str, String)],
        body: &Json,
        cancel: &Cancel,
    ) -> Result<Json> {
        self.post_json_settled(url, headers, body, cancel, &|_| false)
    }

    /// `post_json`, where a failure `settled` recognises is returned at once instead of
    /// retried: a server that refuses the request's form answers the same every time,
    /// even with a 5xx.
    pub fn post_json_settled(
        &self,
        url: &str,
        headers: &[(&str, String)],
        body: &Json,
        cancel: &Cancel,
        settled: &dyn Fn(&Error) -> bool,
    ) -> Result<Json> {
        let body = Body::json(body);
        let reply = self.fetch_settled(url, headers, &body, MAX_RESPONSE_BYTES, cancel, settled)?;
        self.parse_json(url, &reply)
    }

    /// GETs `url` and returns the JSON of a 2xx response.
    pub fn get_json(&self, url: &str, headers: &[(&str, String)], cancel: &Cancel) -> Result<Json> {
        let reply = self.fetch(url, headers, &Body::Get, MAX_RESPONSE_BYTES, cancel)?;
        self.parse_json(url, &reply)
    }

    /// The JSON of a 2xx body, or an `llm_error` quoting it.
    pub fn parse_json(&self, url: &str, reply: &[u8]) -> Result<Json> {
        serde_json::from_slice(reply).map_err(|e| {
            self.error(
                format!("malformed response from {url}: {e}"),
                Some(200),
                &String::from_utf8_lossy(reply),
            )
        })
    }

    /// Sends `body` to `url`, retrying transient failures, and returns the body of a
    /// 2xx response (at most `limit` bytes).
    pub fn fetch(
        &self,
        url: &str,
        headers: &[(&str, String)],
        body: &Body,
        limit: u64,
        cancel: &Cancel,
    ) -> Result<Vec<u8>> {
        self.fetch_settled(url, headers, body, limit, cancel, &|_| false)
    }

    fn fetch_settled(
        &self,
        url: &str,
        headers: &[(&str, String)],
        body: &Body,
        limit: u64,
        cancel: &Cancel,
        settled: &dyn Fn(&Error) -> bool,
    ) -> Result<Vec<u8>> {
        let mut retries = Retries::default();
        loop {
            check_cancel(cancel)?;
            let clock = AttemptClock::start(self.settings.timeout, body.len());
            let outcome = match self.attempt(url, headers, body, limit, &clock, cancel)? {
                Ok(reply) => self.judge(url, reply),
                Err(error) => self.judge_transport(url, &error, &clock),
            };
            match outcome {
                Outcome::Done(json) => return Ok(json),
                Outcome::Fail(error) => return Err(error),
                Outcome::Retry(error, _) if settled(&error) => {
                    return Err(retries.final_error(error))
                }
                Outcome::Retry(error, retry_after) => {
                    self.wait_to_retry(&mut retries, error, retry_after, cancel)?;
                }
            }
        }
    }

    /// Waits before the next attempt, or ends the call with `error` when the retries
    /// are spent or the wait would take the call past `MAX_WAIT_PER_CALL`.
    fn wait_to_retry(
        &self,
        retries: &mut Retries,
        error: Error,
        retry_after: Option<Duration>,
        cancel: &Cancel,
    ) -> Result<()> {
        if retries.done >= self.settings.max_retries {
            return Err(retries.final_error(error));
        }
        let wait = self.backoff(retries.done, retry_after);
        let waited = retries.waited.saturating_add(wait);
        if waited > MAX_WAIT_PER_CALL {
            let asked = match retry_after {
                Some(_) => "the server asked to wait",
                None => "the backoff would wait",
            };
            let message = format!(
                "{} ({asked} {}s more before retrying, past the {}s a call waits in all)",
                error.message(),
                wait.as_secs(),
                MAX_WAIT_PER_CALL.as_secs()
            );
            return Err(retries.final_error(error.with_message(message)));
        }
        sleep(wait, cancel)?;
        retries.done += 1;
        retries.waited = waited;
        Ok(())
    }

    /// Runs one exchange on a worker thread, giving up on it if the call is cancelled
    /// or the attempt's clock runs out.
    fn attempt(
        &self,
        url: &str,
        headers: &[(&str, String)],
        body: &Body,
        limit: u64,
        clock: &AttemptClock,
        cancel: &Cancel,
    ) -> Result<Result<Reply, ureq::Error>> {
        let prepared = match body {
            Body::Get => {
                let mut request = self.agent.get(url);
                for (name, value) in headers {
                    request = request.header(*name, value.as_str());
                }
                Prepared::Get(request)
            }
            Body::Post {
                content_type,
                payload,
            } => {
                let mut request = self.agent.post(url).header("content-type", content_type);
                for (name, value) in headers {
                    request = request.header(*name, value.as_str());
                }
                Prepared::Post(request, Arc::clone(payload))
            }
        };
        let (sender, receiver) = mpsc::channel();
        let worker_clock = clock.clone();
        std::thread::Builder::new()
            .name("tasklisp-http".into())
            .spawn(move || {
                // The receiver is gone when the call was cancelled; nobody needs the reply.
                let _ = sender.send(exchange(prepared, limit, &worker_clock));
            })
            .map_err(|e| {
                Error::task_failure(
                    Reason::LlmError,
                    format!("{}: cannot start a request: {e}", self.provider),
                )
            })?;
        loop {
            match receiver.recv_timeout(POLL) {
                Ok(result) => return Ok(result),
                Err(RecvTimeoutError::Timeout) if clock.expired() => {
                    return Ok(Err(AttemptClock::timed_out()))
                }
                Err(RecvTimeoutError::Timeout) => check_cancel(cancel)?,
                Err(RecvTimeoutError::Disconnected) => {
                    return Err(Error::task_failure(
                        Reason::LlmError,
                        format!(
                            "{}: the request to {} ended without a reply",
                            self.provider,
                            self.scrub(url)
                        ),
                    ))
                }
            }
        }
    }

    fn judge(&self, url: &str, reply: Reply) -> Outcome {
        let status = reply.status;
        if (200..300).contains(&status) {
            return Outcome::Done(reply.body);
        }
        let text = String::from_utf8_lossy(&reply.body);
        let summary = server_message(&text).map(|m| format!(": {}", excerpt(&self.scrub(&m), 300)));
        let error = self.error(
            format!(
                "HTTP {status} from {url}{}{}",
                summary.unwrap_or_default(),
                if (300..400).contains(&status) {
                    " (redirects are not followed: give the URL it names as the base URL)"
                } else {
                    ""
                }
            ),
            Some(status),
            &text,
        );
        if status == 429 || status == 408 || status >= 500 {
            Outcome::Retry(error, reply.retry_after)
        } else {
            Outcome::Fail(error)
        }
    }

    /// A failed exchange; any timeout but the connect timeout is the attempt's timeout
    /// (ureq's own per-read limits are never shorter).
    fn judge_transport(&self, url: &str, error: &ureq::Error, clock: &AttemptClock) -> Outcome {
        let transient = matches!(
            error,
            ureq::Error::Timeout(_)
                | ureq::Error::Io(_)
                | ureq::Error::ConnectionFailed
                | ureq::Error::Protocol(_)
        );
        let cause = match error {
            ureq::Error::Timeout(ureq::Timeout::Connect) => format!(
                "no connection within {:.3}s (the connect timeout)",
                self.settings.connect_timeout.as_secs_f64()
            ),
            ureq::Error::Timeout(_) => timeout_cause(clock),
            ureq::Error::Io(io) if io.kind() == std::io::ErrorKind::TimedOut => {
                timeout_cause(clock)
            }
            other => other.to_string(),
        };
        let failure = self.error(format!("request to {url} failed: {cause}"), None, "");
        if transient {
            Outcome::Retry(failure, None)
        } else {
            Outcome::Fail(failure)
        }
    }

    /// A 2xx JSON answer without the expected shape: `what` says what was missing.
    pub fn unexpected(&self, what: &str, body: &Json) -> Error {
        self.error(
            format!("unexpected response: {what}"),
            Some(200),
            &body.to_string(),
        )
    }

    /// An `llm_error` with `{status, body}` details; the message and the body are
    /// scrubbed of secrets (the body before it is cut, so no part of a key survives).
    fn error(&self, message: String, status: Option<u16>, body: &str) -> Error {
        Error::task_failure(
            Reason::LlmError,
            format!("{}: {}", self.provider, self.scrub(&message)),
        )
        .with_details(json!({"status": status, "body": excerpt(&self.scrub(body), EXCERPT_BYTES)}))
    }

    /// What this client keeps out of its errors.
    pub fn secrets(&self) -> &Secrets {
        &self.secrets
    }

    /// The text with every secret this client knows, and any URL's credentials,
    /// replaced by `[REDACTED]`.
    fn scrub(&self, text: &str) -> String {
        self.secrets.scrub(text)
    }

    /// How long to wait before retry number `retry + 1`.
    fn backoff(&self, retry: u32, retry_after: Option<Duration>) -> Duration {
        if let Some(wait) = retry_after {
            return wait;
        }
        let doubled = self
            .settings
            .backoff_base
            .saturating_mul(2u32.saturating_pow(retry))
            .min(self.settings.backoff_max);
        // Full backoff scaled into [50%, 100%]: concurrent callers spread out.
        doubled.mul_f64(0.5 + jitter() / 2.0)
    }
}

pub(crate) mod stream;

/// What an attempt past its clock's limit says.
fn timeout_cause(clock: &AttemptClock) -> String {
    format!(
        "no complete answer within {:.3}s (the timeout)",
        clock.limit().as_secs_f64()
    )
}

/// The retries of one call so far.
#[derive(Default)]
struct Retries {
    done: u32,
    waited: Duration,
}

impl Retries {
    fn final_error(&self, error: Error) -> Error {
        error.with_detail("attempts", json!(self.done + 1))
    }
}

/// A request ready to go to the worker thread.
enum Prepared {
    Get(ureq::RequestBuilder<ureq::typestate::WithoutBody>),
    Post(
        ureq::RequestBuilder<ureq::typestate::WithBody>,
        Arc<Vec<u8>>,
    ),
}

/// One exchange and the reading of its whole body (at most `limit` bytes).
fn exchange(prepared: Prepared, limit: u64, clock: &AttemptClock) -> Result<Reply, ureq::Error> {
    let response = match prepared {
        Prepared::Get(request) => request.call()?,
        Prepared::Post(request, payload) => request.send(&payload[..])?,
    };
    read_reply(response, limit, clock)
}

/// A response read whole: its status, `Retry-After` and body (at most `limit` bytes),
/// read piece by piece so that the attempt's clock sees each piece.
fn read_reply(
    response: ureq::http::Response<ureq::Body>,
    limit: u64,
    clock: &AttemptClock,
) -> Result<Reply, ureq::Error> {
    let status = response.status().as_u16();
    let retry_after = response
        .headers()
        .get("retry-after")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok())
        .map(Duration::from_secs);
    let mut reader = response
        .into_body()
        .into_with_config()
        .limit(limit)
        .reader();
    let mut body = Vec::new();
    let mut buffer = vec![0u8; 16 << 10];
    loop {
        if clock.expired() {
            return Err(AttemptClock::timed_out());
        }
        match reader.read(&mut buffer)? {
            0 => break,
            read => {
                clock.count(read);
                body.extend_from_slice(buffer.get(..read).unwrap_or_default());
            }
        }
    }
    Ok(Reply {
        status,
        retry_after,
        body,
    })
}

/// The `error.message` (or a string `error`) that OpenAI- and Anthropic-style servers
/// put in their error bodies.
fn server_message(body: &str) -> Option<String> {
    let json: Json = serde_json::from_str(body).ok()?;
    let error = json.get("error")?;
    match error {
        Json::String(message) => Some(message.clone()),
        _ => error.get("message")?.as_str().map(str::to_owned),
    }
}

/// `execution_halted` after Ctrl-C, `execution_timeout` past the deadline.
/// Token counts from a response's `usage` object, under the server's key names.
pub fn usage(answer: &Json, input_key: &str, output_key: &str) -> Option<super::Usage> {
    let usage = answer.get("usage")?;
    Some(super::Usage::new(
        usage.get(input_key)?.as_u64()?,
        usage.get(output_key)?.as_u64()?,
    ))
}

pub fn check_cancel(cancel: &Cancel) -> Result<()> {
    if cancel.flag.load(std::sync::atomic::Ordering::Relaxed) {
        return Err(Error::task_failure(Reason::ExecutionHalted, "interrupted"));
    }
    // The deadline alone: the flag may have been set since it was read above, and a
    // Ctrl-C that lands now is reported on the next check, not as a timeout.
    if cancel.deadline.is_some_and(|d| Instant::now() >= d) {
        return Err(Error::task_failure(
            Reason::ExecutionTimeout,
            "the model call did not finish before the deadline",
        ));
    }
    Ok(())
}

/// Sleeps for `duration`, waking every 50 ms to see whether the call was cancelled.
pub fn sleep(duration: Duration, cancel: &Cancel) -> Result<()> {
    let end = Instant::now() + duration;
    loop {
        check_cancel(cancel)?;
        let left = end.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Ok(());
        }
        std::thread::sleep(left.min(POLL));
    }
}

/// A number in [0, 1) that differs between calls: std's hasher keys are random per
/// process and change with each `RandomState`, which is all jitter needs.
fn jitter() -> f64 {
    let mut hasher = RandomState::new().build_hasher();
    hasher.write_u8(0);
    (hasher.finish() >> 11) as f64 / (1u64 << 53) as f64
}

/// At most `max` bytes of `text`, cut at a character boundary, marked when cut.
pub fn excerpt(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_owned();
    }
    let marker = "…";
    let mut end = max.saturating_sub(marker.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}{marker}", &text[..end])
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;

    #[test]
    fn an_endpoint_hides_its_key_and_its_urls_password() {
        let endpoint = Endpoint {
            base_url: "http://u:pw9@host/v1".into(),
            api_key: Some("sk-123".into()),
            ..Endpoint::default()
        };
        assert_eq!(
            endpoint.secrets().scrub("sk-123 pw9 http://u:pw9@host/v1"),
            "[REDACTED] [REDACTED] http://[REDACTED]@host/v1"
        );
    }

    #[test]
    fn excerpt_is_bounded_and_cuts_on_a_character_boundary() {
        let text = "é".repeat(2000);
        let cut = excerpt(&text, EXCERPT_BYTES);
        assert!(cut.len() <= EXCERPT_BYTES);
        assert!(cut.ends_with('…'));
        assert_eq!(excerpt("short", 10), "short");
    }

    #[test]
    fn server_message_reads_both_error_shapes() {
        assert_eq!(
            server_message(r#"{"error": {"message": "bad key", "type": "x"}}"#).as_deref(),
            Some("bad key")
        );
        assert_eq!(
            server_message(r#"{"error": "model not found"}"#).as_deref(),
            Some("model not found")
        );
        assert_eq!(server_message("<html>"), None);
    }

    #[test]
    fn backoff_doubles_within_jitter_and_honours_retry_after() {
        let client = HttpClient::new("test", HttpSettings::default(), Secrets::default(), true);
        for retry in 0..3 {
            let full = Duration::from_millis(500 * 2u64.pow(retry));
            let wait = client.backoff(retry, None);
            assert!(
                wait >= full / 2 && wait <= full,
                "{wait:?} for retry {retry}"
            );
        }
        assert_eq!(
            client.backoff(10, None).max(Duration::from_secs(30)),
            Duration::from_secs(30)
        );
        assert_eq!(
            client.backoff(0, Some(Duration::from_secs(7))),
            Duration::from_secs(7)
        );
    }

    #[test]
    fn an_attempt_gets_a_second_more_for_each_mib_it_moves() {
        let clock = AttemptClock::start(Duration::from_secs(5), 1 << 20);
        assert_eq!(clock.limit(), Duration::from_secs(6));
        clock.count(3 << 19);
        assert_eq!(clock.limit(), Duration::from_millis(7500));
        assert!(!clock.expired());
        let past = AttemptClock {
            start: Instant::now() - Duration::from_secs(2),
            ..AttemptClock::start(Duration::from_secs(1), 0)
        };
        assert!(past.expired());
    }

    #[test]
    fn loopback_urls_are_recognised() {
        assert!(is_loopback("http://localhost:11434/v1"));
        assert!(is_loopback("http://127.0.0.1:8080/v1"));
        assert!(is_loopback("http://[::1]:8080/v1"));
        assert!(!is_loopback("https://api.openai.com/v1"));
        assert!(!is_loopback("http://127.0.0.1.example.com/v1"));
        assert!(!is_loopback("not a url"));
    }

    #[test]
    fn sleep_stops_early_when_cancelled() {
        let flag = Arc::new(AtomicBool::new(false));
        let cancel = Cancel {
            flag: flag.clone(),
            deadline: None,
        };
        let setter = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(100));
            flag.store(true, Ordering::Relaxed);
        });
        // Uncancelled, the sleep would end with Ok: the error shows it stopped early.
        let error = sleep(Duration::from_secs(10), &cancel).unwrap_err();
        assert_eq!(error.reason(), Some("execution_halted"));
        setter.join().unwrap();
    }

    #[test]
    fn a_past_deadline_is_a_timeout() {
        let cancel = Cancel {
            flag: Arc::default(),
            deadline: Some(Instant::now()),
        };
        let error = check_cancel(&cancel).unwrap_err();
        assert_eq!(error.reason(), Some("execution_timeout"));
    }
}

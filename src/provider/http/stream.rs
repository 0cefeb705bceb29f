//! A POST whose answer is a stream of server-sent events (`"stream": true`): the events
//! are handed over as they arrive. The timeout bounds the whole answer, as it does a
//! non-streamed one: keep-alive comments and a trickle of bytes do not extend it. The
//! helpers at the end are shared by every provider's streamed answer.

use super::{
    check_cancel, read_reply, AttemptClock, HttpClient, Outcome, Reply, Retries,
    MAX_RESPONSE_BYTES, POLL,
};
use crate::error::{Error, Reason, Result};
use crate::interrupt::Cancel;
use crate::provider::sse::{Event, Parser};
use crate::provider::Response;
use serde_json::{json, Value as Json};
use std::io::Read;
use std::sync::mpsc::{self, RecvTimeoutError, Sender};

/// What the thread reading the stream reports.
enum Chunk {
    /// A non-2xx answer, read whole.
    Status(Reply),
    /// A 2xx answer that is one JSON body instead of a stream (a server that does not
    /// stream), read whole.
    Whole(Reply),
    Events(Vec<Event>),
    /// The stream ended.
    End,
    /// The exchange failed (before or during the stream).
    Failed(ureq::Error),
    /// The stream broke a rule of server-sent events.
    Malformed(Error),
}

impl HttpClient {
    /// POSTs `body` as JSON and hands each event of the answer to `on_event`, which
    /// says whether to read on (`Ok(false)` once the answer is complete). A failure
    /// before the first event is retried as `fetch` retries; after it, the call fails.
    /// A server that answers with one JSON body (`application/json`) instead of a
    /// stream gives that body, for the caller to read as the whole answer.
    pub fn post_events(
        &self,
        url: &str,
        headers: &[(&str, String)],
        body: &Json,
        cancel: &Cancel,
        on_event: &mut dyn FnMut(Event) -> Result<bool>,
    ) -> Result<Option<Json>> {
        let mut retries = Retries::default();
        let payload = body.to_string().into_bytes();
        loop {
            check_cancel(cancel)?;
            let clock = AttemptClock::start(self.settings.timeout, payload.len());
            let receiver = self.start_stream(url, headers, payload.clone(), &clock)?;
            let mut started = false;
            let outcome = loop {
                match receiver.recv_timeout(POLL) {
                    Ok(Chunk::Events(events)) => {
                        started = true;
                        for event in events {
                            if !on_event(event)? {
                                return Ok(None);
                            }
                        }
                    }
                    Ok(Chunk::End) => return Ok(None),
                    Ok(Chunk::Whole(reply)) => return self.parse_json(url, &reply.body).map(Some),
                    Ok(Chunk::Status(reply)) => break self.judge(url, reply),
                    Ok(Chunk::Failed(error)) => break self.judge_transport(url, &error, &clock),
                    Ok(Chunk::Malformed(error)) => return Err(error),
                    Err(RecvTimeoutError::Timeout) if clock.expired() => {
                        break self.judge_transport(url, &AttemptClock::timed_out(), &clock)
                    }
                    Err(RecvTimeoutError::Timeout) => check_cancel(cancel)?,
                    Err(RecvTimeoutError::Disconnected) => {
                        return Err(Error::task_failure(
                            Reason::LlmError,
                            format!(
                                "{}: the stream from {} ended without a word",
                                self.provider,
                                self.scrub(url)
                            ),
                        ))
                    }
                }
            };
            match outcome {
                Outcome::Done(_) => return Ok(None),
                Outcome::Fail(error) => return Err(error),
                Outcome::Retry(error, _) if started => return Err(retries.final_error(error)),
                Outcome::Retry(error, retry_after) => {
                    self.wait_to_retry(&mut retries, error, retry_after, cancel)?;
                }
            }
        }
    }

    /// Starts the exchange on a thread that reads the stream and reports its chunks.
    fn start_stream(
        &self,
        url: &str,
        headers: &[(&str, String)],
        payload: Vec<u8>,
        clock: &AttemptClock,
    ) -> Result<mpsc::Receiver<Chunk>> {
        let mut request = self
            .agent
            .post(url)
            .header("content-type", "application/json")
            .header("accept", "text/event-stream");
        for (name, value) in headers {
            request = request.header(*name, value.as_str());
        }
        let (sender, receiver) = mpsc::channel();
        let clock = clock.clone();
        std::thread::Builder::new()
            .name("tasklisp-stream".into())
            .spawn(move || read_stream(request, &payload, &clock, &sender))
            .map_err(|e| {
                Error::task_failure(
                    Reason::LlmError,
                    format!("{}: cannot start a request: {e}", self.provider),
                )
            })?;
        Ok(receiver)
    }
}

/// Whether a response is one JSON body (`Content-Type: application/json`, with or
/// without parameters) rather than events.
fn is_json(response: &ureq::http::Response<ureq::Body>) -> bool {
    response
        .headers()
        .get("content-type")
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.split(';').next())
        .is_some_and(|mime| mime.trim().eq_ignore_ascii_case("application/json"))
}

/// Sends the request and reports what comes back; stops once nobody listens.
fn read_stream(
    request: ureq::RequestBuilder<ureq::typestate::WithBody>,
    payload: &[u8],
    clock: &AttemptClock,
    sender: &Sender<Chunk>,
) {
    let response = match request.send(payload) {
        Ok(response) => response,
        Err(error) => {
            let _ = sender.send(Chunk::Failed(error));
            return;
        }
    };
    let success = (200..300).contains(&response.status().as_u16());
    if !success || is_json(&response) {
        let chunk = match read_reply(response, MAX_RESPONSE_BYTES, clock) {
            Ok(reply) if success => Chunk::Whole(reply),
            Ok(reply) => Chunk::Status(reply),
            Err(error) => Chunk::Failed(error),
        };
        let _ = sender.send(chunk);
        return;
    }
    let mut reader = response
        .into_body()
        .into_with_config()
        .limit(MAX_RESPONSE_BYTES)
        .reader();
    let mut parser = Parser::default();
    let mut buffer = vec![0u8; 16 << 10];
    loop {
        if clock.expired() {
            let _ = sender.send(Chunk::Failed(AttemptClock::timed_out()));
            return;
        }
        let chunk = match reader.read(&mut buffer) {
            Ok(0) => match parser.finish() {
                Ok(last) => {
                    if let Some(event) = last {
                        let _ = sender.send(Chunk::Events(vec![event]));
                    }
                    Chunk::End
                }
                Err(error) => Chunk::Malformed(error),
            },
            Ok(read) => {
                clock.count(read);
                match parser.feed(buffer.get(..read).unwrap_or_default()) {
                    Ok(events) if events.is_empty() => continue,
                    Ok(events) => Chunk::Events(events),
                    Err(error) => Chunk::Malformed(error),
                }
            }
            Err(error) => Chunk::Failed(ureq::Error::from(error)),
        };
        let last = !matches!(chunk, Chunk::Events(_));
        if sender.send(chunk).is_err() || last {
            return;
        }
    }
}

/// Where streamed text goes as it arrives.
pub type Sink<'a> = &'a mut dyn FnMut(&str);

/// The answer of a server that sent it whole instead of streaming it: shown at once.
pub(crate) fn answered_whole(response: Result<Response>, sink: Sink) -> Result<Response> {
    let response = response?;
    sink(&response.content);
    Ok(response)
}

/// An event's data as JSON; anything else is an unexpected answer showing the data.
pub(crate) fn event_json(client: &HttpClient, event: &Event) -> Result<Json> {
    serde_json::from_str(&event.data).map_err(|e| {
        client.unexpected(
            &format!("a streamed event is not JSON: {e}"),
            &json!(event.data),
        )
    })
}

/// An error the server sent inside the stream, scrubbed of the client's secrets (a
/// server may echo the key).
pub(crate) fn streamed_error(client: &HttpClient, provider: &str, error: &Json) -> Error {
    let secrets = client.secrets();
    let message = error
        .get("message")
        .and_then(Json::as_str)
        .unwrap_or("the server sent an error");
    Error::task_failure(
        Reason::LlmError,
        format!("{provider}: {}", secrets.scrub(message)),
    )
    .with_details(json!({"error": secrets.scrub_json(error)}))
}

pub(crate) fn incomplete(provider: &str) -> Error {
    Error::task_failure(
        Reason::LlmError,
        format!("{provider}: the stream ended before the answer was complete"),
    )
}

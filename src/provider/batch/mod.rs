//! Provider batch APIs — OpenAI's Batch API and Anthropic's Message Batches: many
//! requests sent as one job, run by the provider within hours at half the price,
//! polled, and read back. `pmap :batch true` gathers the model calls of its items into
//! one job (`src/task/pmap.rs`); this module turns those calls into the provider's job
//! and its results back into one answer per call.

mod anthropic;
mod openai;

use super::{Cancel, Request, Response};
use crate::error::{Error, Reason, Result};
use serde_json::{json, Value as Json};
use std::collections::HashMap;
use std::time::Duration;

/// A provider's batch API. The driver ([`run`]) calls these in order: an entry per
/// call, one `submit`, `poll` until the job has ended, then `results`.
pub trait BatchApi: Send + Sync {
    /// What the job holds for `request` under `custom_id` (an OpenAI JSONL line, an
    /// Anthropic `requests` element).
    fn entry(&self, custom_id: &str, request: &Request) -> Result<Json>;
    /// Submits the entries as one job and returns its id.
    fn submit(&self, entries: Vec<Json>, cancel: &Cancel) -> Result<String>;
    /// Where the job stands.
    fn poll(&self, id: &str, cancel: &Cancel) -> Result<JobState>;
    /// The answer of every request of an ended job, by custom id.
    fn results(&self, job: &JobState, cancel: &Cancel) -> Result<Vec<(String, Result<Response>)>>;
}

/// A batch job as the provider reports it.
#[derive(Clone, Debug)]
pub struct JobState {
    pub id: String,
    /// The provider's own word: `in_progress`, `completed`, `expired`, `ended`…
    pub status: String,
    /// True once no request of the job will run any more.
    pub ended: bool,
    pub done: u64,
    pub failed: u64,
    pub total: u64,
    /// The provider's whole answer, for what `results` needs (file ids, results URL).
    pub raw: Json,
}

/// How often a running job is polled: from `first`, growing by half each time, up to
/// `max`. `TASKLISP_BATCH_POLL` (seconds) sets `first`.
#[derive(Clone, Copy, Debug)]
pub struct Polling {
    pub first: Duration,
    pub max: Duration,
}

impl Polling {
    pub fn from_env() -> Polling {
        let first = std::env::var("TASKLISP_BATCH_POLL")
            .ok()
            .and_then(|s| s.trim().parse::<f64>().ok())
            .filter(|s| s.is_finite() && *s >= 0.0 && *s <= 3600.0)
            .map_or(Duration::from_secs(5), Duration::from_secs_f64);
        Polling {
            first,
            max: Duration::from_secs(60).max(first),
        }
    }

    fn next(&self, wait: Duration) -> Duration {
        wait.mul_f64(1.5).clamp(self.first, self.max)
    }
}

/// One call of a batch: its custom id (`item-N-round-R`) and its request.
pub struct Call {
    pub custom_id: String,
    pub request: Request,
}

impl Call {
    /// The custom id names the `pmap` item (0-based) and the task's round, so an answer
    /// maps back to the item that waits for it.
    pub fn new(item: usize, request: Request) -> Call {
        Call {
            custom_id: format!("item-{item}-round-{}", request.round.max(1)),
            request,
        }
    }
}

/// Runs `calls` as one job of `api` and returns each call's answer, in the order of
/// `calls`. `resume` is a job submitted earlier for the same calls (by a run that was
/// stopped); `submitted` hears the id of a job as soon as it exists, `progress` each
/// state polled.
pub fn run(
    api: &dyn BatchApi,
    calls: &[Call],
    resume: Option<String>,
    polling: Polling,
    cancel: &Cancel,
    submitted: &mut dyn FnMut(&str),
    progress: &mut dyn FnMut(&JobState),
) -> Result<Vec<Result<Response>>> {
    let id = match resume {
        Some(id) => id,
        None => {
            let entries = calls
                .iter()
                .map(|call| api.entry(&call.custom_id, &call.request))
                .collect::<Result<Vec<_>>>()?;
            api.submit(entries, cancel)?
        }
    };
    submitted(&id);
    let mut wait = polling.first;
    let job = loop {
        let job = api.poll(&id, cancel)?;
        progress(&job);
        if job.ended {
            break job;
        }
        super::http::sleep(wait, cancel)?;
        wait = polling.next(wait);
    };
    let mut answers: HashMap<String, Result<Response>> =
        api.results(&job, cancel)?.into_iter().collect();
    Ok(calls
        .iter()
        .map(|call| {
            answers.remove(&call.custom_id).unwrap_or_else(|| {
                Err(Error::task_failure(
                    Reason::LlmError,
                    format!(
                        "the batch {} ended ({}) without an answer for {}",
                        job.id, job.status, call.custom_id
                    ),
                ))
            })
        })
        .collect())
}

/// The lines of a JSONL text, each parsed; a line that is not JSON is an `llm_error`.
pub fn jsonl(text: &[u8]) -> Result<Vec<Json>> {
    text.split(|b| *b == b'\n')
        .filter(|line| !line.iter().all(u8::is_ascii_whitespace))
        .map(|line| {
            serde_json::from_slice(line).map_err(|e| {
                Error::task_failure(
                    Reason::LlmError,
                    format!("a batch result line is not JSON: {e}"),
                )
            })
        })
        .collect()
}

/// The string at `key` of a provider's answer, or an `llm_error` quoting the answer.
fn string_at(client: &super::http::HttpClient, json: &Json, key: &str) -> Result<String> {
    json.get(key)
        .and_then(Json::as_str)
        .map(str::to_owned)
        .ok_or_else(|| client.unexpected(&format!("no \"{key}\" string"), json))
}

/// Entries as JSONL: one compact JSON value a line.
pub fn to_jsonl(entries: &[Json]) -> Vec<u8> {
    let mut text = Vec::with_capacity(entries.len() * 256);
    for entry in entries {
        // Writing JSON into a Vec cannot fail.
        let _ = serde_json::to_writer(&mut text, entry);
        text.push(b'\n');
    }
    text
}

/// The failure of one request inside a job, as the usual `TASK_FAILURE` of a model
/// call: `llm_error` with the provider's status and message, `execution_timeout` for a
/// request the job expired before running, `execution_halted` for a cancelled one.
pub fn request_failure(provider: &str, kind: FailureKind, message: &str, details: Json) -> Error {
    let (reason, text) = match kind {
        FailureKind::Error => (Reason::LlmError, format!("{provider} batch: {message}")),
        FailureKind::Expired => (
            Reason::ExecutionTimeout,
            format!("{provider} batch: the job expired before this request ran"),
        ),
        FailureKind::Cancelled => (
            Reason::ExecutionHalted,
            format!("{provider} batch: the request was cancelled"),
        ),
    };
    Error::task_failure(reason, text).with_details(json!({"batch": details}))
}

/// Why a request of a job has no answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FailureKind {
    Error,
    Expired,
    Cancelled,
}

/// A `multipart/form-data` body: text fields, then one file. Returns the content type
/// (with its boundary) and the bytes.
pub fn multipart(fields: &[(&str, &str)], file: (&str, &str, &[u8])) -> (String, Vec<u8>) {
    let boundary = format!("tasklisp-{:016x}", boundary_seed(file.2));
    let mut body = Vec::with_capacity(file.2.len() + 512);
    for (name, value) in fields {
        body.extend_from_slice(
            format!("--{boundary}\r\ncontent-disposition: form-data; name=\"{name}\"\r\n\r\n{value}\r\n")
                .as_bytes(),
        );
    }
    let (name, filename, bytes) = file;
    body.extend_from_slice(
        format!(
            "--{boundary}\r\ncontent-disposition: form-data; name=\"{name}\"; filename=\"{filename}\"\r\ncontent-type: application/jsonl\r\n\r\n"
        )
        .as_bytes(),
    );
    body.extend_from_slice(bytes);
    body.extend_from_slice(format!("\r\n--{boundary}--\r\n").as_bytes());
    (format!("multipart/form-data; boundary={boundary}"), body)
}

/// A boundary that does not occur in JSONL: JSON text never holds a bare `--tasklisp-`
/// line start, and the hash varies it with the content anyway.
fn boundary_seed(bytes: &[u8]) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    bytes.len().hash(&mut hasher);
    bytes.get(..bytes.len().min(4096)).hash(&mut hasher);
    hasher.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jsonl_round_trips_and_skips_blank_lines() {
        let entries = vec![json!({"a": 1}), json!({"b": "x\ny"})];
        let text = to_jsonl(&entries);
        assert_eq!(text.iter().filter(|b| **b == b'\n').count(), 2);
        let mut with_blank = text.clone();
        with_blank.extend_from_slice(b"\n  \n");
        assert_eq!(jsonl(&with_blank).unwrap(), entries);
        let e = jsonl(b"{\"a\":1}\nnot json\n").unwrap_err();
        assert_eq!(e.reason(), Some("llm_error"));
    }

    #[test]
    fn custom_ids_name_the_item_and_round() {
        let request = Request {
            round: 2,
            ..Request::default()
        };
        assert_eq!(Call::new(17, request).custom_id, "item-17-round-2");
        assert_eq!(Call::new(0, Request::default()).custom_id, "item-0-round-1");
    }

    #[test]
    fn polling_grows_by_half_up_to_the_maximum() {
        let polling = Polling {
            first: Duration::from_secs(2),
            max: Duration::from_secs(5),
        };
        assert_eq!(polling.next(Duration::from_secs(2)), Duration::from_secs(3));
        assert_eq!(polling.next(Duration::from_secs(4)), Duration::from_secs(5));
    }

    #[test]
    fn multipart_holds_the_fields_and_the_file() {
        let (content_type, body) = multipart(&[("purpose", "batch")], ("file", "b.jsonl", b"{}\n"));
        let boundary = content_type.trim_start_matches("multipart/form-data; boundary=");
        let text = String::from_utf8(body).unwrap();
        assert!(text.starts_with(&format!("--{boundary}\r\n")));
        assert!(text.contains("name=\"purpose\"\r\n\r\nbatch\r\n"));
        assert!(text
            .contains("filename=\"b.jsonl\"\r\ncontent-type: application/jsonl\r\n\r\n{}\n\r\n"));
        assert!(text.ends_with(&format!("--{boundary}--\r\n")));
    }
}

//! Provider batch APIs — OpenAI's Batch API and Anthropic's Message Batches: many
//! requests sent as one job, run by the provider within hours at half the price,
//! polled, and read back. `pmap :batch true` gathers the model calls of its items into
//! one job (`src/task/pmap.rs`); this module turns those calls into the provider's job
//! and its results back into one answer per call.

use super::{Request, Response};
use crate::error::{Error, Reason, Result};
use crate::interrupt::Cancel;
use serde_json::{json, Value as Json};
use std::collections::HashMap;
use std::time::Duration;

/// A provider's batch API. The driver ([`run`]) calls these in order: an entry per
/// call, one `submit` (or none, for a job resumed), `poll` until the job has ended, then
/// `results`. A job may hold 100,000 requests, so nothing here holds them all as JSON
/// values at once: the entries go into the JSONL text one by one, and the results are
/// handed on a line at a time.
pub trait BatchApi: Send + Sync {
    /// The provider's name and base URL: jobs of different origins never share a key.
    fn origin(&self) -> String;
    /// What the job holds for `request` under `custom_id` (an OpenAI JSONL line, an
    /// Anthropic `requests` element).
    fn entry(&self, custom_id: &str, request: &Request) -> Result<Json>;
    /// Submits the entries — `file`, JSONL, one compact entry a line — as one job and
    /// returns its id.
    fn submit(&self, file: Vec<u8>, cancel: &Cancel) -> Result<String>;
    /// Where the job stands.
    fn poll(&self, id: &str, cancel: &Cancel) -> Result<JobState>;
    /// Hands `answer` the custom id and the answer of every request of an ended job, as
    /// each is read.
    fn results(&self, job: &JobState, cancel: &Cancel, answer: &mut Answers) -> Result<()>;
}

/// Where [`BatchApi::results`] puts each answer: the request's custom id and its answer.
pub type Answers<'a> = dyn FnMut(&str, Result<Response>) + 'a;

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

/// One call of a batch: its custom id (`item-N-round-R`) and its request, borrowed
/// from the item that waits for it.
pub struct Call<'a> {
    pub custom_id: String,
    pub request: &'a Request,
}

impl<'a> Call<'a> {
    /// The custom id names the `pmap` item (0-based) and the task's round, so an answer
    /// maps back to the item that waits for it.
    pub fn new(item: usize, request: &'a Request) -> Call<'a> {
        Call {
            custom_id: format!("item-{item}-round-{}", request.round.max(1)),
            request,
        }
    }
}

/// Where the driver records its jobs, so that a run stopped while a job runs can wait
/// for that job when run again instead of submitting the same requests twice (the run
/// log does this; see `src/task/batch.rs`).
pub trait Journal {
    /// A job submitted earlier for the requests whose key is `key`, worth waiting for.
    fn find(&mut self, key: &str) -> Option<String>;
    /// `job` now runs the requests of `key`, submitted by this run or `resumed`. The
    /// record must be durable when this returns: waiting comes next, and may be stopped.
    fn started(&mut self, key: &str, job: &str, requests: usize, resumed: bool);
    /// The job ended as `ended`; `state` is the provider's last word when there is one.
    fn ended(&mut self, key: &str, job: &str, ended: Ended, state: Option<&JobState>);
}

/// How a job ended, as the journal records it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ended {
    /// Every request has an answer.
    Answered,
    /// Some requests failed, expired or were cancelled.
    Partial,
    /// The job as a whole failed: no request has an answer.
    Failed,
    /// The provider does not know the job (a resumed job it has deleted).
    Lost,
}

impl Ended {
    pub fn as_str(self) -> &'static str {
        match self {
            Ended::Answered => "answered",
            Ended::Partial => "partial",
            Ended::Failed => "failed",
            Ended::Lost => "lost",
        }
    }
}

/// The key of a job's requests: a digest of the provider and its base URL
/// ([`BatchApi::origin`]) and the requests as JSONL (`file`), custom ids included.
pub fn job_key(api: &dyn BatchApi, file: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    let mut hasher = Sha256::new();
    hasher.update(api.origin().as_bytes());
    hasher.update(b"\n");
    hasher.update(file);
    crate::digest::finish_hex(hasher)
}

/// Runs `calls` as one job of `api` and returns each call's answer, in the order of
/// `calls`. With a `journal`, a job it holds for the same requests is waited for instead
/// of submitting them again, and the job this run waits for is recorded in it before
/// the first poll. `progress` hears each state polled.
pub fn run(
    api: &dyn BatchApi,
    calls: &[Call],
    polling: Polling,
    cancel: &Cancel,
    mut journal: Option<&mut dyn Journal>,
    progress: &mut dyn FnMut(&JobState),
) -> Result<Vec<Result<Response>>> {
    let file = requests_file(api, calls)?;
    let key = journal.as_ref().map(|_| job_key(api, &file));
    let resumed = match (journal.as_deref_mut(), &key) {
        (Some(journal), Some(key)) => resume(api, journal, key, calls.len(), cancel)?,
        _ => None,
    };
    let id = match resumed {
        Some(id) => id,
        None => {
            let id = api.submit(file, cancel)?;
            if let (Some(journal), Some(key)) = (journal.as_deref_mut(), &key) {
                journal.started(key, &id, calls.len(), false);
            }
            id
        }
    };
    let job = wait(api, &id, polling, cancel, progress)?;
    let answers = by_call(api, &job, calls, cancel);
    if let (Some(journal), Some(key)) = (journal, &key) {
        let ended = match &answers {
            Ok(answers) if answers.iter().all(Result::is_ok) => Ended::Answered,
            Ok(_) => Ended::Partial,
            Err(_) => Ended::Failed,
        };
        journal.ended(key, &id, ended, Some(&job));
    }
    answers
}

/// The job in `journal` for `key`, once the provider has confirmed it still knows it;
/// a job it does not know (HTTP 404) is recorded as lost.
fn resume(
    api: &dyn BatchApi,
    journal: &mut dyn Journal,
    key: &str,
    requests: usize,
    cancel: &Cancel,
) -> Result<Option<String>> {
    let Some(id) = journal.find(key) else {
        return Ok(None);
    };
    match api.poll(&id, cancel) {
        Ok(_) => {
            journal.started(key, &id, requests, true);
            Ok(Some(id))
        }
        Err(e) if e.details().get("status") == Some(&json!(404)) => {
            journal.ended(key, &id, Ended::Lost, None);
            Ok(None)
        }
        Err(e) => Err(e),
    }
}

/// Polls the job with backoff until it has ended.
fn wait(
    api: &dyn BatchApi,
    id: &str,
    polling: Polling,
    cancel: &Cancel,
    progress: &mut dyn FnMut(&JobState),
) -> Result<JobState> {
    let mut wait = polling.first;
    loop {
        let job = api.poll(id, cancel)?;
        progress(&job);
        if job.ended {
            return Ok(job);
        }
        super::http::sleep(wait, cancel)?;
        wait = polling.next(wait);
    }
}

/// The requests of `calls` as JSONL: each entry written as soon as it is made, and
/// dropped.
fn requests_file(api: &dyn BatchApi, calls: &[Call]) -> Result<Vec<u8>> {
    let mut file = Vec::new();
    for call in calls {
        let entry = api.entry(&call.custom_id, call.request)?;
        // Writing JSON into a Vec cannot fail.
        let _ = serde_json::to_writer(&mut file, &entry);
        file.push(b'\n');
    }
    Ok(file)
}

/// The answers of an ended job in the order of `calls`, each put in its call's place as
/// it is read. A call the job has no answer for fails, and so does one it answers twice
/// (which answer is meant cannot be told); an answer for an id never submitted means the
/// output is not this job's, and every call fails.
fn by_call(
    api: &dyn BatchApi,
    job: &JobState,
    calls: &[Call],
    cancel: &Cancel,
) -> Result<Vec<Result<Response>>> {
    let ids: Vec<&str> = calls.iter().map(|call| call.custom_id.as_str()).collect();
    let mut answers = Answered::new(&ids);
    api.results(job, cancel, &mut |custom_id, answer| {
        answers.take(custom_id, answer)
    })?;
    Ok(answers.into_results(&job.id, &job.status))
}

/// The answers of a job as its output file gives them, one slot per submitted id.
pub struct Answered<'a> {
    place: HashMap<&'a str, usize>,
    ids: Vec<&'a str>,
    slots: Vec<Slot>,
    /// Ids the output answers that were never submitted (the first few).
    strangers: Vec<String>,
}

enum Slot {
    Missing,
    Answered(Box<Result<Response>>),
    Twice,
}

/// How many ids never submitted an error names.
const STRANGERS_NAMED: usize = 3;

impl<'a> Answered<'a> {
    pub fn new(ids: &[&'a str]) -> Answered<'a> {
        Answered {
            place: ids.iter().enumerate().map(|(i, &id)| (id, i)).collect(),
            ids: ids.to_vec(),
            slots: ids.iter().map(|_| Slot::Missing).collect(),
            strangers: Vec::new(),
        }
    }

    /// Records the output's answer for `custom_id`.
    pub fn take(&mut self, custom_id: &str, answer: Result<Response>) {
        let Some(slot) = self
            .place
            .get(custom_id)
            .and_then(|&i| self.slots.get_mut(i))
        else {
            if self.strangers.len() < STRANGERS_NAMED {
                self.strangers.push(custom_id.to_owned());
            }
            return;
        };
        *slot = match slot {
            Slot::Missing => Slot::Answered(Box::new(answer)),
            _ => Slot::Twice,
        };
    }

    /// Each submitted id's answer, in order, or the failure that stands for it.
    pub fn into_results(self, job: &str, status: &str) -> Vec<Result<Response>> {
        let failure = |message: String| Err(Error::task_failure(Reason::LlmError, message));
        let strangers = self.strangers;
        self.slots
            .into_iter()
            .zip(self.ids)
            .map(|(slot, id)| match slot {
                _ if !strangers.is_empty() => failure(format!(
                    "the output of batch {job} answers {}, never submitted: it is not this job's output, so none of its answers is used",
                    strangers.join(", ")
                )),
                Slot::Answered(answer) => *answer,
                Slot::Twice => failure(format!(
                    "the output of batch {job} answers {id} more than once: which answer is meant cannot be told"
                )),
                Slot::Missing => failure(format!(
                    "the batch {job} ended ({status}) without an answer for {id}"
                )),
            })
            .collect()
    }
}

/// Parses each non-blank line of a JSONL text in turn and hands it to `each`; a line
/// that is not JSON is an `llm_error`. Only one line is held as JSON at a time.
pub fn each_line(text: &[u8], each: &mut dyn FnMut(Json) -> Result<()>) -> Result<()> {
    for line in text.split(|b| *b == b'\n') {
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let json = serde_json::from_slice(line).map_err(|e| {
            Error::task_failure(
                Reason::LlmError,
                format!("a batch result line is not JSON: {e}"),
            )
        })?;
        each(json)?;
    }
    Ok(())
}

/// The string at `key` of a provider's answer, or an `llm_error` quoting the answer.
pub(crate) fn string_at(
    client: &super::http::HttpClient,
    json: &Json,
    key: &str,
) -> Result<String> {
    json.get(key)
        .and_then(Json::as_str)
        .map(str::to_owned)
        .ok_or_else(|| client.unexpected(&format!("no \"{key}\" string"), json))
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
    let (name, filename, bytes) = file;
    let mut head: String = fields
        .iter()
        .map(|(name, value)| {
            format!("--{boundary}\r\ncontent-disposition: form-data; name=\"{name}\"\r\n\r\n{value}\r\n")
        })
        .collect();
    head.push_str(&format!(
        "--{boundary}\r\ncontent-disposition: form-data; name=\"{name}\"; filename=\"{filename}\"\r\ncontent-type: application/jsonl\r\n\r\n"
    ));
    let tail = format!("\r\n--{boundary}--\r\n");
    // The exact size: the file may be hundreds of megabytes, and a Vec that outgrows its
    // capacity holds the old and the new buffer at once while it moves.
    let mut body = Vec::with_capacity(head.len() + bytes.len() + tail.len());
    body.extend_from_slice(head.as_bytes());
    body.extend_from_slice(bytes);
    body.extend_from_slice(tail.as_bytes());
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
    use std::sync::Mutex;

    /// A batch API in memory: jobs it knows end at the first poll, answering each
    /// request with its prompt; it counts submissions.
    #[derive(Default)]
    struct Memory {
        known: Mutex<Vec<String>>,
        submitted: Mutex<usize>,
    }

    impl BatchApi for Memory {
        fn origin(&self) -> String {
            "memory".into()
        }
        fn entry(&self, custom_id: &str, request: &Request) -> Result<Json> {
            Ok(json!({"custom_id": custom_id, "prompt": request.prompt}))
        }
        fn submit(&self, file: Vec<u8>, _: &Cancel) -> Result<String> {
            *self.submitted.lock().unwrap() += 1;
            let id = format!("job-{}", file.iter().filter(|b| **b == b'\n').count());
            self.known.lock().unwrap().push(id.clone());
            Ok(id)
        }
        fn poll(&self, id: &str, _: &Cancel) -> Result<JobState> {
            if !self.known.lock().unwrap().iter().any(|k| k == id) {
                return Err(Error::task_failure(Reason::LlmError, "HTTP 404")
                    .with_details(json!({"status": 404})));
            }
            Ok(JobState {
                id: id.into(),
                status: "completed".into(),
                ended: true,
                done: 1,
                failed: 0,
                total: 1,
                raw: Json::Null,
            })
        }
        fn results(&self, _: &JobState, _: &Cancel, answer: &mut Answers) -> Result<()> {
            let yes = Response {
                content: "yes".into(),
                ..Response::default()
            };
            answer("item-0-round-1", Ok(yes));
            Ok(())
        }
    }

    /// A journal in memory: what it was told, and the job it offers.
    #[derive(Default)]
    struct Notes {
        offer: Option<String>,
        heard: Vec<String>,
    }

    impl Journal for Notes {
        fn find(&mut self, _: &str) -> Option<String> {
            self.offer.clone()
        }
        fn started(&mut self, _: &str, job: &str, requests: usize, resumed: bool) {
            self.heard
                .push(format!("started {job} {requests} resumed={resumed}"));
        }
        fn ended(&mut self, _: &str, job: &str, ended: Ended, _: Option<&JobState>) {
            self.heard.push(format!("ended {job} {}", ended.as_str()));
        }
    }

    fn one_call(api: &Memory, notes: &mut Notes) -> Vec<String> {
        calls_answered(api, &[0], Some(notes))
            .into_iter()
            .map(|a| a.unwrap().content)
            .collect()
    }

    /// The answers to one call for each of `items`, in round 1.
    fn calls_answered(
        api: &Memory,
        items: &[usize],
        notes: Option<&mut Notes>,
    ) -> Vec<Result<Response>> {
        let request = Request::default();
        let calls: Vec<Call> = items
            .iter()
            .map(|&item| Call::new(item, &request))
            .collect();
        let polling = Polling {
            first: Duration::ZERO,
            max: Duration::ZERO,
        };
        let journal = notes.map(|notes| notes as &mut dyn Journal);
        run(
            api,
            &calls,
            polling,
            &Cancel::default(),
            journal,
            &mut |_| {},
        )
        .unwrap()
    }

    #[test]
    fn answers_map_back_by_custom_id_and_a_missing_one_fails() {
        let answers = calls_answered(&Memory::default(), &[3, 0], None);
        let e = answers[0].as_ref().unwrap_err();
        assert_eq!(e.reason(), Some("llm_error"));
        assert!(e
            .to_string()
            .contains("without an answer for item-3-round-1"));
        assert_eq!(answers[1].as_ref().unwrap().content, "yes");
    }

    fn answer(content: &str) -> Result<Response> {
        Ok(Response {
            content: content.into(),
            ..Response::default()
        })
    }

    fn contents(results: Vec<Result<Response>>) -> Vec<String> {
        results
            .into_iter()
            .map(|r| r.map_or_else(|e| format!("error: {e}"), |r| r.content))
            .collect()
    }

    #[test]
    fn an_id_answered_twice_fails_and_the_others_stand() {
        let mut answers = Answered::new(&["a", "b"]);
        answers.take("a", answer("first"));
        answers.take("b", answer("b"));
        answers.take("a", answer("second"));
        answers.take("a", answer("third"));
        assert_eq!(
            contents(answers.into_results("job-1", "completed")),
            [
                "error: llm_error: the output of batch job-1 answers a more than once: which answer is meant cannot be told",
                "b"
            ]
        );
    }

    #[test]
    fn an_id_never_submitted_fails_every_call() {
        let mut answers = Answered::new(&["a", "b"]);
        answers.take("a", answer("a"));
        answers.take("zz", answer("?"));
        answers.take("b", answer("b"));
        let results = contents(answers.into_results("job-1", "completed"));
        assert_eq!(results.len(), 2);
        for result in results {
            assert_eq!(result, "error: llm_error: the output of batch job-1 answers zz, never submitted: it is not this job's output, so none of its answers is used");
        }
    }

    #[test]
    fn a_job_in_the_journal_is_waited_for_and_not_submitted_again() {
        let api = Memory::default();
        api.known.lock().unwrap().push("old".into());
        let mut notes = Notes {
            offer: Some("old".into()),
            ..Notes::default()
        };
        assert_eq!(one_call(&api, &mut notes), ["yes"]);
        assert_eq!(*api.submitted.lock().unwrap(), 0);
        assert_eq!(
            notes.heard,
            ["started old 1 resumed=true", "ended old answered"]
        );
    }

    #[test]
    fn a_job_the_provider_no_longer_knows_is_lost_and_submitted_anew() {
        let api = Memory::default();
        let mut notes = Notes {
            offer: Some("gone".into()),
            ..Notes::default()
        };
        assert_eq!(one_call(&api, &mut notes), ["yes"]);
        assert_eq!(*api.submitted.lock().unwrap(), 1);
        assert_eq!(
            notes.heard,
            [
                "ended gone lost",
                "started job-1 1 resumed=false",
                "ended job-1 answered"
            ]
        );
    }

    #[test]
    fn the_job_key_follows_the_origin_and_every_request() {
        let api = Memory::default();
        let a = job_key(&api, b"{\"custom_id\":\"item-0-round-1\"}\n");
        assert_eq!(a, job_key(&api, b"{\"custom_id\":\"item-0-round-1\"}\n"));
        assert_ne!(a, job_key(&api, b"{\"custom_id\":\"item-1-round-1\"}\n"));
        assert_eq!(a.len(), 64);
    }

    #[test]
    fn the_requests_file_holds_one_compact_entry_a_line() {
        let request = Request::default();
        let calls = [Call::new(0, &request), Call::new(1, &request)];
        let file = requests_file(&Memory::default(), &calls).unwrap();
        assert_eq!(
            String::from_utf8(file).unwrap(),
            "{\"custom_id\":\"item-0-round-1\",\"prompt\":\"\"}\n{\"custom_id\":\"item-1-round-1\",\"prompt\":\"\"}\n"
        );
    }

    /// The lines `each_line` hands on, or its error.
    fn lines(text: &[u8]) -> Result<Vec<Json>> {
        let mut seen = Vec::new();
        each_line(text, &mut |line| {
            seen.push(line);
            Ok(())
        })?;
        Ok(seen)
    }

    #[test]
    fn each_line_parses_lines_in_order_and_skips_blank_ones() {
        let text = b"{\"a\":1}\n\n  \n{\"b\":\"x\\ny\"}\n";
        assert_eq!(
            lines(text).unwrap(),
            [json!({"a": 1}), json!({"b": "x\ny"})]
        );
        let e = lines(b"{\"a\":1}\nnot json\n").unwrap_err();
        assert_eq!(e.reason(), Some("llm_error"));
    }

    #[test]
    fn custom_ids_name_the_item_and_round() {
        let request = Request {
            round: 2,
            ..Request::default()
        };
        assert_eq!(Call::new(17, &request).custom_id, "item-17-round-2");
        assert_eq!(
            Call::new(0, &Request::default()).custom_id,
            "item-0-round-1"
        );
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

//! Cassettes: `record` wraps a provider and writes each exchange to a file, `replay`
//! answers from that file and never calls a model. A cassette is JSON lines,
//! `{"request": {...}, "response": {"content": "...", "usage": {...} | null,
//! "finish_reason": "...", "reasoning": "..."}}`, where the request is the canonical
//! form of `Request` (`request_key.rs`: keys sorted at every level) and also the key
//! replay looks answers up by.
//!
//! The cassette is rewritten whole after each exchange (a temporary file renamed over
//! it), so it always holds complete lines; a last line cut off all the same (a cassette
//! copied while written) is left out on replay.

use super::message::tool_call_from_json;
use super::request_key::{canonical, canonical_request};
use super::{Provider, Request, Response, ToolCall, Usage};
use crate::error::{Error, Reason, Result};
use crate::interrupt::Cancel;
use serde_json::{json, Map, Value as Json};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

fn failure(message: String) -> Error {
    Error::task_failure(Reason::LlmError, message)
}

/// Records what another provider answers. Recording starts the cassette afresh: a
/// cassette holds exactly one run.
pub struct Record {
    inner: Arc<dyn Provider>,
    path: PathBuf,
    /// The cassette's text so far, written whole after each exchange.
    text: Mutex<String>,
}

impl Record {
    pub fn new(inner: Arc<dyn Provider>, path: &Path) -> Result<Record> {
        crate::atomic_file::write(path, b"").map_err(|e| {
            failure(format!(
                "record: cannot create the cassette {}: {e}",
                path.display()
            ))
        })?;
        Ok(Record {
            inner,
            path: path.to_owned(),
            text: Mutex::new(String::new()),
        })
    }

    /// Adds `line` to the cassette, which is replaced whole.
    fn append(&self, line: &Json) -> std::io::Result<()> {
        let mut text = self
            .text
            .lock()
            .map_err(|_| std::io::Error::other("an earlier write panicked"))?;
        let before = text.len();
        text.push_str(&line.to_string());
        text.push('\n');
        let written = crate::atomic_file::write(&self.path, text.as_bytes());
        if written.is_err() {
            text.truncate(before);
        }
        written
    }
}

impl Provider for Record {
    fn name(&self) -> &str {
        "record"
    }

    fn endpoint(&self) -> Option<&super::http::Endpoint> {
        self.inner.endpoint()
    }

    /// Failed calls are not recorded: replaying them would only repeat the failure.
    /// The line is scrubbed of the inner provider's secrets: a key never reaches the
    /// cassette, even when a server puts it in an answer.
    fn complete(&self, request: &Request, cancel: &Cancel) -> Result<Response> {
        let response = self.inner.complete(request, cancel)?;
        let line = self.inner.secrets().scrub_json(&json!({
            "request": canonical_request(request),
            "response": response_to_json(&response),
        }));
        self.append(&line).map_err(|e| {
            failure(format!(
                "record: cannot write to {}: {e}",
                self.path.display()
            ))
        })?;
        Ok(response)
    }
}

/// Answers from a cassette. Identical requests get their recorded answers in the
/// order they were recorded; once those run out, the last one again.
pub struct Replay {
    path: PathBuf,
    answers: Mutex<HashMap<String, Answers>>,
}

struct Answers {
    responses: Vec<Response>,
    next: usize,
}

impl Replay {
    pub fn new(path: &Path) -> Result<Replay> {
        let text = std::fs::read_to_string(path).map_err(|e| {
            failure(format!(
                "replay: cannot read the cassette {}: {e}",
                path.display()
            ))
        })?;
        let mut answers: HashMap<String, Answers> = HashMap::new();
        // A last line without its newline may have been cut off: it counts only whole.
        let cut_off = (!text.ends_with('\n'))
            .then(|| text.lines().count())
            .filter(|&lines| lines > 0);
        for (index, line) in text
            .lines()
            .enumerate()
            .filter(|(_, l)| !l.trim().is_empty())
        {
            if Some(index + 1) == cut_off && parse_line(line).is_err() {
                break;
            }
            let (key, response) = parse_line(line).map_err(|e| {
                failure(format!(
                    "replay: {} line {}: {e}",
                    path.display(),
                    index + 1
                ))
            })?;
            answers
                .entry(key)
                .or_insert_with(|| Answers {
                    responses: Vec::new(),
                    next: 0,
                })
                .responses
                .push(response);
        }
        Ok(Replay {
            path: path.to_owned(),
            answers: Mutex::new(answers),
        })
    }
}

/// One cassette line as (request key, response).
fn parse_line(line: &str) -> std::result::Result<(String, Response), String> {
    let entry: Json = serde_json::from_str(line).map_err(|e| e.to_string())?;
    let request = entry.get("request").ok_or("no \"request\"")?;
    let response = entry.get("response").ok_or("no \"response\"")?;
    let key = canonical(request.clone()).to_string();
    Ok((key, response_from_json(response)?))
}

/// A response as cassettes and run journals keep it: the content, the usage the
/// server reported (or null), and the tool calls, finish reason and reasoning when
/// there are.
pub fn response_to_json(response: &Response) -> Json {
    let usage = response
        .usage
        .map(|u| json!({"input_tokens": u.input_tokens, "output_tokens": u.output_tokens}));
    let mut answer = Map::new();
    answer.insert("content".into(), json!(response.content));
    answer.insert("usage".into(), json!(usage));
    if !response.tool_calls.is_empty() {
        let calls = response.tool_calls.iter().map(ToolCall::to_json).collect();
        answer.insert("tool_calls".into(), Json::Array(calls));
    }
    if let Some(reason) = &response.finish_reason {
        answer.insert("finish_reason".into(), json!(reason));
    }
    if let Some(reasoning) = &response.reasoning {
        answer.insert("reasoning".into(), json!(reasoning));
    }
    Json::Object(answer)
}

/// The response [`response_to_json`] wrote; what is wrong with it otherwise.
pub fn response_from_json(response: &Json) -> std::result::Result<Response, String> {
    let content = response
        .get("content")
        .and_then(Json::as_str)
        .ok_or("no \"response\".\"content\" string")?;
    let usage = response.get("usage").and_then(|u| {
        Some(Usage::new(
            u.get("input_tokens")?.as_u64()?,
            u.get("output_tokens")?.as_u64()?,
        ))
    });
    let tool_calls = match response.get("tool_calls") {
        Some(Json::Array(calls)) => calls
            .iter()
            .map(tool_call_from_json)
            .collect::<std::result::Result<_, _>>()?,
        _ => Vec::new(),
    };
    let text = |name: &str| response.get(name).and_then(Json::as_str).map(str::to_owned);
    Ok(Response {
        content: content.to_owned(),
        usage,
        tool_calls,
        finish_reason: text("finish_reason"),
        reasoning: text("reasoning"),
        ..Response::default()
    })
}

impl Provider for Replay {
    fn name(&self) -> &str {
        "replay"
    }

    fn complete(&self, request: &Request, _cancel: &Cancel) -> Result<Response> {
        let key = canonical_request(request);
        let mut answers = self
            .answers
            .lock()
            .map_err(|_| failure("replay: the cassette is unusable after a panic".into()))?;
        let found = answers.get_mut(&key.to_string()).and_then(|answers| {
            let response = answers
                .responses
                .get(answers.next)
                .or(answers.responses.last())?
                .clone();
            answers.next = (answers.next + 1).min(answers.responses.len());
            Some(response)
        });
        found.ok_or_else(|| {
            failure(format!(
                "replay: no recorded response in {} for task `{}` (prompt {:?})",
                self.path.display(),
                request.task,
                super::http::excerpt(&request.prompt, 120)
            ))
            .with_detail("request", key)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provider::request_key::tests::request;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// Answers "answer N" for its Nth call.
    struct Counter(AtomicUsize);

    impl Provider for Counter {
        fn name(&self) -> &str {
            "counter"
        }
        fn complete(&self, request: &Request, _cancel: &Cancel) -> Result<Response> {
            let n = self.0.fetch_add(1, Ordering::Relaxed);
            Ok(Response {
                content: format!("{} answer {n}", request.prompt),
                usage: (n == 0).then_some(Usage::new(1, 2)),
                tool_calls: (n == 1)
                    .then(|| ToolCall {
                        id: "c1".into(),
                        name: "look".into(),
                        arguments: json!({"q": "x"}),
                    })
                    .into_iter()
                    .collect(),
                ..Response::default()
            })
        }
    }

    #[test]
    fn replay_gives_back_what_record_saw_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.jsonl");
        let record = Record::new(Arc::new(Counter(AtomicUsize::new(0))), &path).unwrap();
        let cancel = Cancel::default();
        let live: Vec<Response> = ["x", "y", "x"]
            .iter()
            .map(|p| record.complete(&request(p), &cancel).unwrap())
            .collect();
        let replay = Replay::new(&path).unwrap();
        for (prompt, expected) in ["x", "y", "x"].iter().zip(&live) {
            let replayed = replay.complete(&request(prompt), &cancel).unwrap();
            assert_eq!(replayed.content, expected.content);
            assert_eq!(replayed.usage, expected.usage);
            assert_eq!(replayed.tool_calls, expected.tool_calls);
        }
        // The answers for "x" are used up: the last one repeats.
        assert_eq!(
            replay.complete(&request("x"), &cancel).unwrap().content,
            "x answer 2"
        );
    }

    #[test]
    fn a_request_missing_from_the_cassette_is_an_llm_error() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("empty.jsonl");
        std::fs::write(&path, "\n").unwrap();
        let error = Replay::new(&path)
            .unwrap()
            .complete(&request("new"), &Cancel::default())
            .unwrap_err();
        assert_eq!(error.reason(), Some("llm_error"));
        assert!(error.message().contains("no recorded response"));
        assert_eq!(error.details()["request"]["prompt"], "new");
    }

    #[test]
    fn a_cassette_cut_off_in_its_last_line_replays_its_whole_lines() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.jsonl");
        let record = Record::new(Arc::new(Counter(AtomicUsize::new(0))), &path).unwrap();
        let cancel = Cancel::default();
        for prompt in ["x", "y"] {
            record.complete(&request(prompt), &cancel).unwrap();
        }
        let whole = std::fs::read_to_string(&path).unwrap();
        assert_eq!(whole.lines().count(), 2);
        let cut = &whole[..whole.len() - 10];
        std::fs::write(&path, cut).unwrap();
        let replay = Replay::new(&path).unwrap();
        assert_eq!(
            replay.complete(&request("x"), &cancel).unwrap().content,
            "x answer 0"
        );
        let missing = replay.complete(&request("y"), &cancel).unwrap_err();
        assert!(missing.message().contains("no recorded response"));
    }

    /// Answers every request cut off by the token limit.
    struct CutOff;

    impl Provider for CutOff {
        fn name(&self) -> &str {
            "cut-off"
        }
        fn complete(&self, _: &Request, _: &Cancel) -> Result<Response> {
            Ok(Response {
                content: "{\"a\": [1,".into(),
                finish_reason: Some("length".into()),
                reasoning: Some("Think.".into()),
                ..Response::default()
            })
        }
    }

    #[test]
    fn the_finish_reason_is_recorded_and_replayed() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.jsonl");
        let cancel = Cancel::default();
        Record::new(Arc::new(CutOff), &path)
            .unwrap()
            .complete(&request("p"), &cancel)
            .unwrap();
        let replayed = Replay::new(&path)
            .unwrap()
            .complete(&request("p"), &cancel)
            .unwrap();
        assert_eq!(replayed.finish_reason.as_deref(), Some("length"));
        assert_eq!(replayed.reasoning.as_deref(), Some("Think."));
        assert!(replayed.truncated());
    }

    #[test]
    fn a_broken_cassette_names_the_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bad.jsonl");
        std::fs::write(
            &path,
            "{\"request\": {}, \"response\": {\"content\": \"a\"}}\n{oops\n",
        )
        .unwrap();
        let error = Replay::new(&path).err().unwrap();
        assert!(error.message().contains("line 2"), "{}", error.message());
        assert!(Replay::new(&dir.path().join("missing.jsonl")).is_err());
    }
}

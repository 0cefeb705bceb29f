//! Anthropic's Message Batches: the requests in one `POST /v1/messages/batches`, the job
//! polled, and its results read from the `results_url` stream (JSONL).

use super::Anthropic;
use crate::error::Result;
use crate::interrupt::Cancel;
use crate::provider::batch::{
    each_line, request_failure, string_at, Answers, BatchApi, FailureKind, JobState,
};
use crate::provider::http::Body;
use crate::provider::{Provider, Request, Response};
use serde_json::{json, Value as Json};
use std::sync::Arc;

/// Results of a large job are far larger than one message.
const MAX_RESULTS_BYTES: u64 = 1 << 30;

impl BatchApi for Anthropic {
    fn origin(&self) -> String {
        format!("{} {}", Provider::name(self), self.endpoint().base_url)
    }

    fn entry(&self, custom_id: &str, request: &Request) -> Result<Json> {
        Ok(json!({"custom_id": custom_id, "params": self.body(request)?}))
    }

    fn submit(&self, file: Vec<u8>, cancel: &Cancel) -> Result<String> {
        let url = self.endpoint().url("v1/messages/batches");
        let body = Body::Post {
            content_type: "application/json".into(),
            payload: Arc::new(requests_body(&file)),
        };
        drop(file);
        let reply = self.client().fetch(
            &url,
            &self.headers(),
            &body,
            crate::provider::http::MAX_RESPONSE_BYTES,
            cancel,
        )?;
        let job = self.client().parse_json(&url, &reply)?;
        string_at(self.client(), &job, "id")
    }

    fn poll(&self, id: &str, cancel: &Cancel) -> Result<JobState> {
        let job = self.client().get_json(
            &self.endpoint().url(&format!("v1/messages/batches/{id}")),
            &self.headers(),
            cancel,
        )?;
        let status = string_at(self.client(), &job, "processing_status")?;
        let count = |key: &str| {
            job.pointer(&format!("/request_counts/{key}"))
                .and_then(Json::as_u64)
                .unwrap_or(0)
        };
        let failed = count("errored") + count("canceled") + count("expired");
        Ok(JobState {
            id: id.to_owned(),
            ended: status == "ended",
            done: count("succeeded") + failed,
            failed,
            total: count("processing") + count("succeeded") + failed,
            status,
            raw: job,
        })
    }

    fn results(&self, job: &JobState, cancel: &Cancel, answer: &mut Answers) -> Result<()> {
        let url = match job.raw.get("results_url").and_then(Json::as_str) {
            Some(url) => url.to_owned(),
            None => self
                .endpoint()
                .url(&format!("v1/messages/batches/{}/results", job.id)),
        };
        let text =
            self.client()
                .fetch(&url, &self.headers(), &Body::Get, MAX_RESULTS_BYTES, cancel)?;
        each_line(&text, &mut |line| {
            let custom_id = string_at(self.client(), &line, "custom_id")?;
            answer(&custom_id, self.answer(&line));
            Ok(())
        })
    }
}

/// The body of a `POST /v1/messages/batches`, `{"requests":[…]}`, made from the entries'
/// JSONL: each line is one compact JSON value (newlines inside strings are escaped), so
/// the lines joined with commas are the array.
fn requests_body(file: &[u8]) -> Vec<u8> {
    const OPEN: &[u8] = b"{\"requests\":[";
    const CLOSE: &[u8] = b"]}";
    let mut body = Vec::with_capacity(OPEN.len() + file.len() + CLOSE.len());
    body.extend_from_slice(OPEN);
    let lines = file.split(|b| *b == b'\n').filter(|line| !line.is_empty());
    for (i, line) in lines.enumerate() {
        if i > 0 {
            body.push(b',');
        }
        body.extend_from_slice(line);
    }
    body.extend_from_slice(CLOSE);
    body
}

impl Anthropic {
    /// One result line: `succeeded` with its message, or `errored`, `canceled`, `expired`.
    fn answer(&self, line: &Json) -> Result<Response> {
        let result = line.get("result");
        let kind = result.and_then(|r| r.get("type")).and_then(Json::as_str);
        match kind {
            Some("succeeded") => match result.and_then(|r| r.get("message")) {
                Some(message) => self.response(message),
                None => Err(self.client().unexpected("no result.message", line)),
            },
            Some("expired") => Err(request_failure(
                "anthropic",
                FailureKind::Expired,
                "",
                line.clone(),
            )),
            Some("canceled") => Err(request_failure(
                "anthropic",
                FailureKind::Cancelled,
                "",
                line.clone(),
            )),
            _ => {
                let message = result
                    .and_then(|r| {
                        r.pointer("/error/error/message")
                            .or_else(|| r.pointer("/error/message"))
                    })
                    .and_then(Json::as_str)
                    .unwrap_or("the request failed");
                Err(request_failure(
                    "anthropic",
                    FailureKind::Error,
                    message,
                    line.clone(),
                ))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_requests_body_is_the_entries_as_one_array() {
        let entries = [
            json!({"custom_id": "a", "params": {"x": "1\n2"}}),
            json!({"custom_id": "b"}),
        ];
        let mut file = Vec::new();
        for entry in &entries {
            serde_json::to_writer(&mut file, entry).unwrap();
            file.push(b'\n');
        }
        let expected = json!({"requests": entries}).to_string().into_bytes();
        assert_eq!(requests_body(&file), expected);
        assert_eq!(requests_body(b""), b"{\"requests\":[]}");
    }
}

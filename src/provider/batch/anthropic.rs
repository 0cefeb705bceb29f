//! Anthropic's Message Batches: the requests in one `POST /v1/messages/batches`, the job
//! polled, and its results read from the `results_url` stream (JSONL).

use super::{jsonl, request_failure, string_at, BatchApi, FailureKind, JobState};
use crate::error::Result;
use crate::provider::anthropic::Anthropic;
use crate::provider::http::Body;
use crate::provider::{Cancel, Provider, Request, Response};
use serde_json::{json, Value as Json};

/// Results of a large job are far larger than one message.
const MAX_RESULTS_BYTES: u64 = 1 << 30;

impl BatchApi for Anthropic {
    fn origin(&self) -> String {
        format!("{} {}", Provider::name(self), self.endpoint().base_url)
    }

    fn entry(&self, custom_id: &str, request: &Request) -> Result<Json> {
        Ok(json!({"custom_id": custom_id, "params": self.body(request)?}))
    }

    fn submit(&self, entries: Vec<Json>, cancel: &Cancel) -> Result<String> {
        let job = self.client().post_json(
            &self.endpoint().url("v1/messages/batches"),
            &self.headers(),
            &json!({"requests": entries}),
            cancel,
        )?;
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

    fn results(&self, job: &JobState, cancel: &Cancel) -> Result<Vec<(String, Result<Response>)>> {
        let url = match job.raw.get("results_url").and_then(Json::as_str) {
            Some(url) => url.to_owned(),
            None => self
                .endpoint()
                .url(&format!("v1/messages/batches/{}/results", job.id)),
        };
        let text =
            self.client()
                .fetch(&url, &self.headers(), &Body::Get, MAX_RESULTS_BYTES, cancel)?;
        jsonl(&text)?
            .iter()
            .map(|line| {
                let custom_id = string_at(self.client(), line, "custom_id")?;
                Ok((custom_id, self.answer(line)))
            })
            .collect()
    }
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

//! OpenAI's Batch API: the requests as a JSONL file uploaded to `/v1/files` (purpose
//! `batch`), a job created at `/v1/batches`, polled, and its output and error files
//! downloaded from `/v1/files/{id}/content`.

use super::OpenAi;
use crate::error::{Error, Reason, Result};
use crate::interrupt::Cancel;
use crate::provider::batch::{
    each_line, multipart, request_failure, string_at, Answers, BatchApi, FailureKind, JobState,
};
use crate::provider::http::Body;
use crate::provider::{Provider, Request, Response};
use serde_json::{json, Value as Json};
use std::sync::Arc;

/// The endpoint every line of the file is for.
const ENDPOINT: &str = "/v1/chat/completions";
/// Batch files are far larger than one completion: up to 200 MB input, as OpenAI allows.
const MAX_FILE_BYTES: u64 = 1 << 30;

impl BatchApi for OpenAi {
    fn origin(&self) -> String {
        format!("{} {}", Provider::name(self), self.endpoint().base_url)
    }

    fn entry(&self, custom_id: &str, request: &Request) -> Result<Json> {
        Ok(json!({
            "custom_id": custom_id,
            "method": "POST",
            "url": ENDPOINT,
            "body": self.body(request)?,
        }))
    }

    fn submit(&self, file: Vec<u8>, cancel: &Cancel) -> Result<String> {
        let (content_type, payload) =
            multipart(&[("purpose", "batch")], ("file", "batch.jsonl", &file));
        drop(file);
        let files_url = self.endpoint().url("files");
        let reply = self.client().fetch(
            &files_url,
            &self.headers(),
            &Body::Post {
                content_type,
                payload: Arc::new(payload),
            },
            super::super::http::MAX_RESPONSE_BYTES,
            cancel,
        )?;
        let file = self.client().parse_json(&files_url, &reply)?;
        let file_id = string_at(self.client(), &file, "id")?;
        let job = self.client().post_json(
            &self.endpoint().url("batches"),
            &self.headers(),
            &json!({"input_file_id": file_id, "endpoint": ENDPOINT, "completion_window": "24h"}),
            cancel,
        )?;
        string_at(self.client(), &job, "id")
    }

    fn poll(&self, id: &str, cancel: &Cancel) -> Result<JobState> {
        let job = self.client().get_json(
            &self.endpoint().url(&format!("batches/{id}")),
            &self.headers(),
            cancel,
        )?;
        let status = string_at(self.client(), &job, "status")?;
        let count = |key: &str| {
            job.pointer(&format!("/request_counts/{key}"))
                .and_then(Json::as_u64)
                .unwrap_or(0)
        };
        Ok(JobState {
            id: id.to_owned(),
            ended: matches!(
                status.as_str(),
                "completed" | "failed" | "expired" | "cancelled"
            ),
            done: count("completed"),
            failed: count("failed"),
            total: count("total"),
            status,
            raw: job,
        })
    }

    fn results(&self, job: &JobState, cancel: &Cancel, answer: &mut Answers) -> Result<()> {
        if job.status == "failed" {
            return Err(Error::task_failure(
                Reason::LlmError,
                format!("openai batch {} failed: {}", job.id, job_errors(&job.raw)),
            )
            .with_details(json!({"batch": job.raw})));
        }
        for key in ["output_file_id", "error_file_id"] {
            let Some(file_id) = job.raw.get(key).and_then(Json::as_str) else {
                continue;
            };
            let url = self.endpoint().url(&format!("files/{file_id}/content"));
            let text =
                self.client()
                    .fetch(&url, &self.headers(), &Body::Get, MAX_FILE_BYTES, cancel)?;
            each_line(&text, &mut |line| {
                let (custom_id, outcome) = self.answer(&line)?;
                answer(&custom_id, outcome);
                Ok(())
            })?;
        }
        Ok(())
    }
}

impl OpenAi {
    /// One line of an output or error file: its custom id and the answer or failure.
    fn answer(&self, line: &Json) -> Result<(String, Result<Response>)> {
        let custom_id = string_at(self.client(), line, "custom_id")?;
        let status = line.pointer("/response/status_code").and_then(Json::as_u64);
        let body = line.pointer("/response/body");
        let outcome = match (status, body) {
            (Some(200), Some(body)) => self.response(body),
            _ => {
                let error = line
                    .get("error")
                    .filter(|e| !e.is_null())
                    .or_else(|| body.and_then(|b| b.get("error")));
                let code = error.and_then(|e| e.get("code")).and_then(Json::as_str);
                let message = error
                    .and_then(|e| e.get("message"))
                    .and_then(Json::as_str)
                    .unwrap_or("the request failed");
                let kind = match code {
                    Some("batch_expired") => FailureKind::Expired,
                    Some("batch_cancelled") => FailureKind::Cancelled,
                    _ => FailureKind::Error,
                };
                let message = match status {
                    Some(status) => format!("HTTP {status}: {message}"),
                    None => message.to_owned(),
                };
                Err(request_failure("openai", kind, &message, line.clone()))
            }
        };
        Ok((custom_id, outcome))
    }
}

/// The messages of a failed job's `errors.data`.
fn job_errors(job: &Json) -> String {
    let messages: Vec<&str> = job
        .pointer("/errors/data")
        .and_then(Json::as_array)
        .map(|errors| {
            errors
                .iter()
                .filter_map(|e| e.get("message").and_then(Json::as_str))
                .collect()
        })
        .unwrap_or_default();
    if messages.is_empty() {
        "no reason given".to_owned()
    } else {
        messages.join("; ")
    }
}

//! Streamed answers (`"stream": true`, server-sent events) from OpenAI-compatible
//! servers: each piece of text goes to a sink as it arrives, and the pieces are put back
//! together into the whole response the server would have sent, so the answer — and
//! the TaskResult built from it — is the one `complete` gives.

use super::structured::JsonForm;
use super::OpenAi;
use crate::error::Result;
use crate::interrupt::Cancel;
use crate::provider::http::stream::{answered_whole, event_json, incomplete, streamed_error, Sink};
use crate::provider::sse::Event;
use crate::provider::{Request, Response};
use serde_json::{json, Value as Json};

impl OpenAi {
    /// A chat completion streamed: `choices[0].delta.content` pieces, the finish reason,
    /// and the usage of the last chunk (`stream_options.include_usage`), until `[DONE]`.
    pub(crate) fn stream_answer(
        &self,
        request: &Request,
        cancel: &Cancel,
        sink: Sink,
    ) -> Result<Response> {
        let mut body = self.body_fields(request, JsonForm::JsonSchema)?;
        body.insert("stream".into(), json!(true));
        body.insert("stream_options".into(), json!({"include_usage": true}));
        let body = Json::Object(body);
        let mut text = String::new();
        let mut reasoning = String::new();
        let mut refusal = String::new();
        let mut finish = Json::Null;
        let mut usage = Json::Null;
        let mut done = false;
        let url = self.endpoint().url("chat/completions");
        let whole =
            self.client()
                .post_events(&url, &self.headers(), &body, cancel, &mut |event| {
                    if event.data.trim() == "[DONE]" {
                        done = true;
                        return Ok(false);
                    }
                    let chunk = self.chunk(&event)?;
                    let delta = chunk.pointer("/choices/0/delta");
                    let piece = |key: &str| delta.and_then(|d| d.get(key)).and_then(Json::as_str);
                    if let Some(piece) = piece("content") {
                        sink(piece);
                        text.push_str(piece);
                    }
                    refusal.push_str(piece("refusal").unwrap_or_default());
                    reasoning.push_str(piece("reasoning_content").unwrap_or_default());
                    if let Some(reason) = chunk.pointer("/choices/0/finish_reason") {
                        if !reason.is_null() {
                            finish = reason.clone();
                        }
                    }
                    if let Some(found) = chunk.get("usage").filter(|u| !u.is_null()) {
                        usage = found.clone();
                    }
                    Ok(true)
                })?;
        if let Some(answer) = whole {
            return answered_whole(self.response(&answer), sink);
        }
        if !done && finish.is_null() {
            return Err(incomplete("openai"));
        }
        let mut message = json!({"role": "assistant", "content": text});
        if text.is_empty() && !refusal.is_empty() {
            message = json!({"role": "assistant", "content": null, "refusal": refusal});
        }
        if let (Some(fields), false) = (message.as_object_mut(), reasoning.is_empty()) {
            fields.insert("reasoning_content".into(), json!(reasoning));
        }
        self.response(&json!({
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": usage,
        }))
    }

    fn chunk(&self, event: &Event) -> Result<Json> {
        let chunk = event_json(self.client(), event)?;
        match chunk.get("error") {
            Some(error) => Err(streamed_error(self.client(), "openai", error)),
            None => Ok(chunk),
        }
    }
}

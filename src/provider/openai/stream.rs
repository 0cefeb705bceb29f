//! Streamed answers (`"stream": true`, server-sent events) from OpenAI-compatible
//! servers and from Anthropic: each piece of text goes to a sink as it arrives, and the
//! pieces are put back together into the whole response the server would have sent, so
//! the answer — and the TaskResult built from it — is the one `complete` gives.

use super::structured::JsonForm;
use super::OpenAi;
use crate::error::{Error, Reason, Result};
use crate::provider::anthropic::Anthropic;
use crate::provider::http::HttpClient;
use crate::provider::sse::Event;
use crate::provider::{Cancel, Request, Response};
use serde_json::{json, Map, Value as Json};

/// Where streamed text goes as it arrives.
pub type Sink<'a> = &'a mut dyn FnMut(&str);

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

impl Anthropic {
    /// A Messages answer streamed: `message_start` (the message and its input usage),
    /// `text_delta` pieces, `message_delta` (stop reason, output usage), `message_stop`.
    pub(crate) fn stream_answer(
        &self,
        request: &Request,
        cancel: &Cancel,
        sink: Sink,
    ) -> Result<Response> {
        let mut body = self.body_fields(request)?;
        body.insert("stream".into(), json!(true));
        let body = Json::Object(body);
        let mut message = Map::new();
        let mut text = String::new();
        let mut stopped = false;
        let url = self.endpoint().url("v1/messages");
        let whole =
            self.client()
                .post_events(&url, &self.headers(), &body, cancel, &mut |event| {
                    let data = event_json(self.client(), &event)?;
                    match data
                        .get("type")
                        .and_then(Json::as_str)
                        .unwrap_or(&event.name)
                    {
                        "message_start" => match data.get("message") {
                            Some(Json::Object(start)) => message = start.clone(),
                            None => {}
                            Some(_) => {
                                return Err(self.client().unexpected(
                                    "a streamed message_start whose message is not an object",
                                    &data,
                                ))
                            }
                        },
                        "content_block_delta" => {
                            if let Some(piece) = data.pointer("/delta/text").and_then(Json::as_str)
                            {
                                sink(piece);
                                text.push_str(piece);
                            }
                        }
                        "message_delta" => merge_delta(&mut message, &data),
                        "message_stop" => {
                            stopped = true;
                            return Ok(false);
                        }
                        "error" => {
                            let error = data.get("error").cloned().unwrap_or(Json::Null);
                            return Err(streamed_error(self.client(), "anthropic", &error));
                        }
                        // `ping`, `content_block_start`, `content_block_stop`.
                        _ => {}
                    }
                    Ok(true)
                })?;
        if let Some(answer) = whole {
            return answered_whole(self.response(&answer), sink);
        }
        if !stopped {
            return Err(incomplete("anthropic"));
        }
        message.insert("content".into(), json!([{"type": "text", "text": text}]));
        self.response(&Json::Object(message))
    }
}

/// The answer of a server that sent it whole instead of streaming it: shown at once.
fn answered_whole(response: Result<Response>, sink: Sink) -> Result<Response> {
    let response = response?;
    sink(&response.content);
    Ok(response)
}

/// An event's data as JSON; anything else is an unexpected answer showing the data.
fn event_json(client: &HttpClient, event: &Event) -> Result<Json> {
    serde_json::from_str(&event.data).map_err(|e| {
        client.unexpected(
            &format!("a streamed event is not JSON: {e}"),
            &json!(event.data),
        )
    })
}

/// `message_delta` sets the stop reason and the output tokens of the message.
fn merge_delta(message: &mut Map<String, Json>, data: &Json) {
    if let Some(stop) = data.pointer("/delta/stop_reason") {
        message.insert("stop_reason".into(), stop.clone());
    }
    if let Some(Json::Object(usage)) = data.get("usage") {
        match message.get_mut("usage") {
            Some(Json::Object(merged)) => merged.extend(usage.clone()),
            _ => {
                message.insert("usage".into(), Json::Object(usage.clone()));
            }
        }
    }
}

/// An error the server sent inside the stream, scrubbed of the client's secrets (a
/// server may echo the key).
fn streamed_error(client: &HttpClient, provider: &str, error: &Json) -> Error {
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

fn incomplete(provider: &str) -> Error {
    Error::task_failure(
        Reason::LlmError,
        format!("{provider}: the stream ended before the answer was complete"),
    )
}

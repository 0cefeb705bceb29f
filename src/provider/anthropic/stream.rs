//! Streamed answers (`"stream": true`, server-sent events) from Anthropic: each piece of
//! text goes to a sink as it arrives, and the pieces are put back together into the
//! whole message the server would have sent, so the answer is the one `complete` gives.

use super::Anthropic;
use crate::error::Result;
use crate::interrupt::Cancel;
use crate::provider::http::stream::{answered_whole, event_json, incomplete, streamed_error, Sink};
use crate::provider::{Request, Response};
use serde_json::{json, Map, Value as Json};

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
        let mut thinking = String::new();
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
                            // `thinking_delta`: reasoning, never shown as the answer.
                            if let Some(piece) =
                                data.pointer("/delta/thinking").and_then(Json::as_str)
                            {
                                thinking.push_str(piece);
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
        let mut blocks = vec![json!({"type": "text", "text": text})];
        if !thinking.is_empty() {
            blocks.insert(0, json!({"type": "thinking", "thinking": thinking}));
        }
        message.insert("content".into(), Json::Array(blocks));
        self.response(&Json::Object(message))
    }
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

//! Anthropic's Messages API: `POST {base}/v1/messages`, where the base is
//! `https://api.anthropic.com` as in `ANTHROPIC_BASE_URL`.

use super::batch::BatchApi;
use super::http::{Endpoint, HttpClient};
use super::structured;
use super::{Cancel, Provider, Request, Response, Usage};
use crate::error::Result;
use serde_json::{json, Value as Json};

/// The API version this client speaks.
const API_VERSION: &str = "2023-06-01";
/// The answer's length cap when none is configured: the API requires one.
pub const DEFAULT_MAX_TOKENS: u64 = 4096;

pub struct Anthropic {
    endpoint: Endpoint,
    client: HttpClient,
    max_tokens: u64,
}

impl Anthropic {
    pub fn new(endpoint: Endpoint, max_tokens: u64) -> Anthropic {
        let client = endpoint.client("anthropic");
        Anthropic {
            endpoint,
            client,
            max_tokens,
        }
    }

    /// The Messages body for `request`. The API has no JSON mode: a JSON-Schema for an
    /// object becomes one tool the request forces (`tool_choice`), whose input is the
    /// answer; otherwise the task's prompt asks for JSON.
    pub fn body(&self, request: &Request) -> Result<Json> {
        let mut body = json!({
            "model": self.endpoint.model_for("anthropic", request)?,
            "max_tokens": self.max_tokens,
        });
        if let Some(system) = &request.system {
            body["system"] = json!(system);
        }
        body["messages"] = json!([{"role": "user", "content": request.prompt}]);
        if let Some(schema) = answer_schema(request) {
            let name = structured::tool_name(&request.task);
            body["tools"] = json!([{
                "name": name,
                "description": "Give the answer as this tool's input.",
                "input_schema": schema,
            }]);
            body["tool_choice"] = json!({"type": "tool", "name": name});
        }
        Ok(body)
    }
}

impl Provider for Anthropic {
    fn name(&self) -> &str {
        "anthropic"
    }

    fn secrets(&self) -> crate::secrets::Secrets {
        self.endpoint.secrets()
    }

    fn default_model(&self) -> Option<&str> {
        self.endpoint.model.as_deref()
    }

    fn complete(&self, request: &Request, cancel: &Cancel) -> Result<Response> {
        let body = self.body(request)?;
        let answer = self.client.post_json(
            &self.endpoint.url("v1/messages"),
            &self.headers(),
            &body,
            cancel,
        )?;
        if answer_schema(request).is_some() {
            if let Some(input) = forced_tool_input(&answer) {
                return Ok(Response {
                    content: input.to_string(),
                    usage: usage(&answer),
                    ..Default::default()
                });
            }
        }
        self.response(&answer)
    }

    /// A task with an output schema is answered by a forced tool call, which is not
    /// text to show: it is sent whole.
    fn stream(
        &self,
        request: &Request,
        cancel: &Cancel,
        sink: &mut dyn FnMut(&str),
    ) -> Result<Response> {
        if answer_schema(request).is_some() {
            return super::whole_to_sink(self, request, cancel, sink);
        }
        self.stream_answer(request, cancel, sink)
    }

    fn batch(&self) -> Option<&dyn BatchApi> {
        Some(self)
    }
}

impl Anthropic {
    /// The version header, and the key's when one is configured.
    pub(crate) fn headers(&self) -> Vec<(&'static str, String)> {
        let mut headers = vec![("anthropic-version", API_VERSION.to_owned())];
        if let Some(key) = &self.endpoint.api_key {
            headers.push(("x-api-key", key.clone()));
        }
        headers
    }

    pub(crate) fn endpoint(&self) -> &Endpoint {
        &self.endpoint
    }

    pub(crate) fn client(&self) -> &HttpClient {
        &self.client
    }

    /// The text of a Messages answer.
    pub(crate) fn response(&self, answer: &Json) -> Result<Response> {
        let blocks = answer
            .get("content")
            .and_then(Json::as_array)
            .ok_or_else(|| self.client.unexpected("no content array", answer))?;
        let content: String = blocks
            .iter()
            .filter(|block| block.get("type").and_then(Json::as_str) == Some("text"))
            .filter_map(|block| block.get("text").and_then(Json::as_str))
            .collect();
        Ok(Response {
            content,
            usage: usage(answer),
            ..Default::default()
        })
    }
}

/// The schema sent as a forced tool: a JSON-Schema for an object (a tool's input is
/// always an object).
fn answer_schema(request: &Request) -> Option<&Json> {
    request
        .json_schema()
        .filter(|s| s.get("type").and_then(Json::as_str) == Some("object"))
}

/// The input of the forced tool's call: the answer.
fn forced_tool_input(answer: &Json) -> Option<&Json> {
    answer
        .get("content")
        .and_then(Json::as_array)?
        .iter()
        .find(|block| block.get("type").and_then(Json::as_str) == Some("tool_use"))
        .and_then(|block| block.get("input"))
}

/// `usage.input_tokens` and `usage.output_tokens`, when the server sent both.
fn usage(answer: &Json) -> Option<Usage> {
    super::http::usage(answer, "input_tokens", "output_tokens")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn body_puts_system_at_the_top_and_keeps_key_order() {
        let provider = Anthropic::new(
            Endpoint {
                base_url: "http://127.0.0.1:9".into(),
                model: Some("claude-x".into()),
                ..Endpoint::default()
            },
            100,
        );
        let request = Request {
            system: Some("Be terse.".into()),
            prompt: "Hi".into(),
            json_mode: true,
            ..Request::default()
        };
        assert_eq!(
            provider.body(&request).unwrap().to_string(),
            r#"{"model":"claude-x","max_tokens":100,"system":"Be terse.","messages":[{"role":"user","content":"Hi"}]}"#
        );
    }

    #[test]
    fn usage_reads_input_and_output_tokens() {
        let answer = json!({"usage": {"input_tokens": 10, "output_tokens": 2}});
        assert_eq!(
            usage(&answer),
            Some(Usage {
                input_tokens: 10,
                output_tokens: 2
            })
        );
    }
}

//! OpenAI-compatible chat completions: OpenAI itself, Ollama, vLLM, llama.cpp's
//! server, LM Studio — anything that serves `POST {base}/chat/completions`.

mod batch;
mod constrain;
mod stream;
pub mod structured;

use crate::error::{Error, Result};
use crate::interrupt::Cancel;
use crate::provider::attachment::openai_content;
use crate::provider::batch::BatchApi;
use crate::provider::http::{Endpoint, HttpClient};
use crate::provider::{Message, Provider, Request, Response, ToolCall, Usage};
use serde_json::{json, Map, Value as Json};
use structured::JsonForm;

pub struct OpenAi {
    /// `openai`, or the name of the server it is a preset for (`ollama`).
    name: &'static str,
    endpoint: Endpoint,
    client: HttpClient,
}

impl OpenAi {
    /// `endpoint.base_url` ends in `/v1` (as `OPENAI_BASE_URL` does); a missing key
    /// sends no `Authorization` header, which local servers accept.
    pub fn new(endpoint: Endpoint) -> OpenAi {
        OpenAi::named("openai", endpoint)
    }

    /// The same client under the name of a preset such as `ollama`.
    pub fn named(name: &'static str, endpoint: Endpoint) -> OpenAi {
        let client = endpoint.client(name);
        OpenAi {
            name,
            endpoint,
            client,
        }
    }

    /// The chat-completions body for `request`, asking for JSON in the richest form.
    pub fn body(&self, request: &Request) -> Result<Json> {
        self.body_in(request, JsonForm::JsonSchema)
    }

    /// The body with a JSON-Schema sent in `form` (a type name asks for a JSON object).
    pub fn body_in(&self, request: &Request, form: JsonForm) -> Result<Json> {
        self.body_fields(request, form).map(Json::Object)
    }

    /// The fields of `body_in`, for the streamed call to add to.
    pub(crate) fn body_fields(
        &self,
        request: &Request,
        form: JsonForm,
    ) -> Result<Map<String, Json>> {
        let mut body = Map::new();
        body.insert(
            "model".into(),
            json!(self.endpoint.model_for(self.name, request)?),
        );
        let messages = request.messages.iter();
        let messages = messages.map(|m| wire_message(self.name, m));
        body.insert("messages".into(), messages.collect::<Result<_>>()?);
        for (name, value) in request.options.fields() {
            body.insert(name.clone(), value.clone());
        }
        if !request.tools.is_empty() {
            let tools: Vec<Json> = request
                .tools
                .iter()
                .map(|tool| {
                    json!({"type": "function", "function": {
                        "name": tool.name,
                        "description": tool.description,
                        "parameters": tool.parameters,
                    }})
                })
                .collect();
            body.insert("tools".into(), Json::Array(tools));
        }
        constrain::tool_choice_into(request, &mut body);
        let grammar = self.grammar_for(request)?;
        if let Some(grammar) = &grammar {
            body.insert("grammar".into(), json!(grammar));
        } else if let Some(schema) = constrain::wanted_schema(request) {
            let format = structured::response_format(form, &request.task, &schema);
            body.insert("response_format".into(), format);
        } else if request.json_mode {
            body.insert("response_format".into(), json!({"type": "json_object"}));
        }
        crate::provider::caching::add_openai_key(request, &mut body);
        request.options.merge_extra_body(&mut body);
        Ok(body)
    }
}

impl Provider for OpenAi {
    fn name(&self) -> &str {
        self.name
    }

    fn endpoint(&self) -> Option<&Endpoint> {
        Some(&self.endpoint)
    }

    fn complete(&self, request: &Request, cancel: &Cancel) -> Result<Response> {
        let base = &self.endpoint.base_url;
        let mut form = structured::remembered(base);
        let answer = loop {
            let body = self.body_in(request, form)?;
            let url = self.endpoint.url("chat/completions");
            // A refusal of the form is not retried: a plainer form is tried at once.
            let refused = |e: &Error| {
                constrain::wanted_schema(request).is_some()
                    && form.plainer().is_some()
                    && structured::refused_response_format(e)
            };
            match self
                .client
                .post_json_settled(&url, &self.headers(), &body, cancel, &refused)
            {
                Err(e) if refused(&e) => {
                    form = form.plainer().ok_or(e)?;
                    structured::remember(base, form);
                }
                answer => break answer?,
            }
        };
        self.response(&answer).map(|r| chosen_in(request, r))
    }

    fn streams(&self) -> bool {
        true
    }

    /// Streamed with the output form this server is known to take; a server that
    /// refuses it gets the whole call, which finds the form it takes.
    fn stream(
        &self,
        request: &Request,
        cancel: &Cancel,
        sink: &mut dyn FnMut(&str),
    ) -> Result<Response> {
        // A tool call is not text to show: a request offering tools is sent whole; so
        // is a `:choice`, whose answer may come wrapped in JSON.
        if !request.tools.is_empty() || !request.choice.is_empty() {
            return super::whole_to_sink(self, request, cancel, sink);
        }
        match self.stream_answer(request, cancel, sink) {
            Err(e)
                if request.json_schema().is_some() && structured::refused_response_format(&e) =>
            {
                super::whole_to_sink(self, request, cancel, sink)
            }
            streamed => streamed,
        }
    }

    fn batch(&self) -> Option<&dyn BatchApi> {
        Some(self)
    }
}

impl OpenAi {
    /// The `Authorization` header, when a key is configured.
    pub(crate) fn headers(&self) -> Vec<(&'static str, String)> {
        self.endpoint
            .api_key
            .iter()
            .map(|key| ("authorization", format!("Bearer {key}")))
            .collect()
    }

    pub(crate) fn endpoint(&self) -> &Endpoint {
        &self.endpoint
    }

    pub(crate) fn client(&self) -> &HttpClient {
        &self.client
    }

    /// The answer in a chat completion.
    pub(crate) fn response(&self, answer: &Json) -> Result<Response> {
        let message = answer.pointer("/choices/0/message");
        let text = |key: &str| message.and_then(|m| m.get(key)).and_then(Json::as_str);
        let tool_calls = match message.and_then(|m| m.get("tool_calls")) {
            None | Some(Json::Null) => Vec::new(),
            Some(calls) => tool_calls(calls).map_err(|e| self.client.unexpected(&e, answer))?,
        };
        let content = match (text("content"), text("refusal")) {
            (Some(content), _) => content,
            (None, _) if !tool_calls.is_empty() => "",
            (None, Some(refusal)) => {
                return Err(self
                    .client
                    .unexpected(&format!("the model refused: {refusal}"), answer))
            }
            (None, None) => {
                return Err(self
                    .client
                    .unexpected("no choices[0].message.content string", answer))
            }
        };
        Ok(Response {
            content: content.to_owned(),
            usage: usage(answer),
            tool_calls,
            finish_reason: answer
                .pointer("/choices/0/finish_reason")
                .and_then(Json::as_str)
                .map(str::to_owned),
            reasoning: text("reasoning_content")
                .filter(|r| !r.is_empty())
                .map(str::to_owned),
            ..Response::default()
        })
    }
}

/// A `:choice` answer, out of the JSON it may come wrapped in.
fn chosen_in(request: &Request, mut response: Response) -> Response {
    if !request.choice.is_empty() {
        response.content = crate::provider::choice::chosen(&response.content);
    }
    response
}

/// A message as chat completions spell it: tool calls as `function` calls whose
/// arguments are a JSON string, tool results as role `tool` messages, attachments as
/// content parts after the text.
fn wire_message(provider: &str, message: &Message) -> Result<Json> {
    let mut wire = Map::new();
    wire.insert("role".into(), json!(message.role.as_str()));
    let content = match message.attachments.as_slice() {
        [] => json!(message.content),
        attachments => openai_content(provider, &message.content, attachments)?,
    };
    wire.insert("content".into(), content);
    if !message.tool_calls.is_empty() {
        let calls: Vec<Json> = message
            .tool_calls
            .iter()
            .map(|call| {
                json!({
                    "id": call.id,
                    "type": "function",
                    "function": {"name": call.name, "arguments": call.arguments_text()},
                })
            })
            .collect();
        wire.insert("tool_calls".into(), Json::Array(calls));
    }
    if let Some(id) = &message.tool_call_id {
        wire.insert("tool_call_id".into(), json!(id));
    }
    Ok(Json::Object(wire))
}

/// `message.tool_calls`: `[{"id", "type": "function", "function": {"name", "arguments"}}]`,
/// the arguments a JSON string (kept as the raw string when it is not JSON).
fn tool_calls(calls: &Json) -> std::result::Result<Vec<ToolCall>, String> {
    let calls = calls.as_array().ok_or("tool_calls is not a list")?;
    calls
        .iter()
        .map(|call| {
            let function = call.get("function").ok_or("a tool call has no function")?;
            let name = function
                .get("name")
                .and_then(Json::as_str)
                .ok_or("a tool call has no function name")?;
            let arguments = match function.get("arguments") {
                Some(Json::String(text)) => {
                    serde_json::from_str(text).unwrap_or_else(|_| Json::String(text.clone()))
                }
                Some(other) => other.clone(),
                None => json!({}),
            };
            Ok(ToolCall {
                id: call
                    .get("id")
                    .and_then(Json::as_str)
                    .unwrap_or_default()
                    .to_owned(),
                name: name.to_owned(),
                arguments,
            })
        })
        .collect()
}

/// `usage.prompt_tokens` and `usage.completion_tokens`, when the server sent both.
fn usage(answer: &Json) -> Option<Usage> {
    crate::provider::caching::openai_usage(answer)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provider::message::single_turn;

    fn provider(model: Option<&str>) -> OpenAi {
        OpenAi::new(Endpoint {
            base_url: "http://127.0.0.1:9/v1".into(),
            model: model.map(str::to_owned),
            ..Endpoint::default()
        })
    }

    #[test]
    fn body_has_system_then_user_and_json_mode() {
        let request = Request {
            messages: single_turn(Some("Be terse."), "Hi"),
            json_mode: true,
            ..Request::default()
        };
        assert_eq!(
            provider(Some("m1")).body(&request).unwrap(),
            json!({
                "model": "m1",
                "messages": [{"role": "system", "content": "Be terse."}, {"role": "user", "content": "Hi"}],
                "response_format": {"type": "json_object"},
            })
        );
    }

    #[test]
    fn tool_calls_and_results_use_the_function_format() {
        let call = ToolCall {
            id: "call_1".into(),
            name: "add".into(),
            arguments: json!({"a": 1}),
        };
        let request = Request {
            messages: vec![
                Message::user("Add"),
                Message::tool_request("", vec![call]),
                Message::tool_result("call_1", "3"),
            ],
            ..Request::default()
        };
        assert_eq!(
            provider(Some("m1")).body(&request).unwrap()["messages"],
            json!([
                {"role": "user", "content": "Add"},
                {"role": "assistant", "content": "", "tool_calls": [
                    {"id": "call_1", "type": "function", "function": {"name": "add", "arguments": "{\"a\":1}"}}
                ]},
                {"role": "tool", "content": "3", "tool_call_id": "call_1"},
            ])
        );
    }

    #[test]
    fn options_go_into_the_body_as_named() {
        let mut options = crate::provider::ModelOptions::default();
        options.set("max-tokens", json!(5)).unwrap();
        options.set("stop", json!("END")).unwrap();
        let request = Request {
            messages: single_turn(None, "Hi"),
            options,
            ..Request::default()
        };
        assert_eq!(
            provider(Some("m1")).body(&request).unwrap().to_string(),
            r#"{"model":"m1","messages":[{"role":"user","content":"Hi"}],"max_tokens":5,"stop":"END"}"#
        );
    }

    #[test]
    fn tool_calls_are_read_with_their_arguments_parsed() {
        let calls = json!([
            {"id": "c1", "type": "function", "function": {"name": "add", "arguments": "{\"a\": 1}"}},
            {"id": "c2", "type": "function", "function": {"name": "add", "arguments": "{oops"}},
        ]);
        let calls = tool_calls(&calls).unwrap();
        assert_eq!(calls[0].arguments, json!({"a": 1}));
        assert_eq!(calls[1].arguments, json!("{oops"));
        assert!(tool_calls(&json!([{"id": "x"}])).is_err());
    }

    #[test]
    fn the_task_model_wins_and_some_model_is_required() {
        let request = Request {
            model: Some("task-model".into()),
            ..Request::default()
        };
        assert_eq!(
            provider(Some("m1")).body(&request).unwrap()["model"],
            "task-model"
        );
        let error = provider(None).body(&Request::default()).unwrap_err();
        assert_eq!(error.reason(), Some("llm_error"));
        assert!(error.message().contains("no model"));
    }

    #[test]
    fn usage_needs_both_counts() {
        let answer = json!({"usage": {"prompt_tokens": 3, "completion_tokens": 5}});
        assert_eq!(usage(&answer), Some(Usage::new(3, 5)));
        assert_eq!(usage(&json!({"usage": {"prompt_tokens": 3}})), None);
    }
}

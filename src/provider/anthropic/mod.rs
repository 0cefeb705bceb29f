//! Anthropic's Messages API: `POST {base}/v1/messages`, where the base is
//! `https://api.anthropic.com` as in `ANTHROPIC_BASE_URL`.

mod batch;
mod stream;

use crate::error::{Error, Reason, Result};
use crate::interrupt::Cancel;
use crate::provider::attachment::anthropic_content;
use crate::provider::batch::BatchApi;
use crate::provider::choice::{choice_schema, chosen};
use crate::provider::http::{Endpoint, HttpClient};
use crate::provider::message::{system_text, tool_name};
use crate::provider::{Message, Provider, Request, Response, Role, ToolCall, Usage};
use serde_json::{json, Map, Value as Json};

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
        self.body_fields(request).map(Json::Object)
    }

    /// The fields of `body`, for the streamed call to add to. A `:grammar` is refused
    /// here, before anything is sent: the API takes none.
    pub(crate) fn body_fields(&self, request: &Request) -> Result<Map<String, Json>> {
        if request.grammar.is_some() && !request.grammar_optional {
            return Err(Error::task_failure(
                Reason::LlmError,
                "anthropic takes no :grammar (llama.cpp's server does; :choice works everywhere)",
            )
            .with_detail("option", json!("grammar")));
        }
        let options = &request.options;
        let mut body = Map::new();
        let model = self.endpoint.model_for("anthropic", request)?;
        body.insert("model".into(), json!(model));
        let cap = options
            .get("max_tokens")
            .and_then(Json::as_u64)
            .unwrap_or(self.max_tokens);
        let budget = thinking_budget(request);
        body.insert("max_tokens".into(), json!(cap + budget.unwrap_or(0)));
        if let Some(system) = system_text(&request.messages) {
            body.insert("system".into(), json!(system));
        }
        body.insert(
            "messages".into(),
            Json::Array(wire_messages(&request.messages)?),
        );
        tools_into(request, &mut body);
        for name in ["temperature", "top_p", "service_tier"] {
            if let Some(value) = options.get(name) {
                body.insert(name.into(), value.clone());
            }
        }
        // The API takes only a list of stop sequences, and has no seed nor penalties.
        match options.get("stop") {
            Some(Json::String(stop)) => body.insert("stop_sequences".into(), json!([stop])),
            Some(stops) => body.insert("stop_sequences".into(), stops.clone()),
            None => None,
        };
        if let Some(budget) = budget {
            body.insert(
                "thinking".into(),
                json!({"type": "enabled", "budget_tokens": budget}),
            );
        }
        crate::provider::caching::mark_anthropic_prefix(request, &model, &mut body);
        options.merge_extra_body(&mut body);
        Ok(body)
    }
}

/// Extended thinking's token budget for `reasoning_effort`: `minimal` 1024 (the API's
/// least), `low` 4096, `medium` 8192, `high` 16384. It is added to `max_tokens`, which
/// must exceed it, so the answer keeps its own cap.
pub fn thinking_budget(request: &Request) -> Option<u64> {
    match request.options.get("reasoning_effort")?.as_str()? {
        "minimal" => Some(1024),
        "low" => Some(4096),
        "medium" => Some(8192),
        "high" => Some(16384),
        _ => None,
    }
}

/// The tools and `tool_choice`: the task's tools, and the answer tool when the answer
/// has a schema (`answer_schema`). Alone, the answer tool is forced; beside the task's
/// tools the model must call one of them (`any`). A `:tool-choice` is spelled
/// `{"type": "auto"|"any"|"none"}` or `{"type": "tool", "name": …}`, and wins.
fn tools_into(request: &Request, body: &mut Map<String, Json>) {
    let mut tools: Vec<Json> = request
        .tools
        .iter()
        .map(|tool| {
            json!({"name": tool.name, "description": tool.description, "input_schema": tool.parameters})
        })
        .collect();
    let mut choice = None;
    if let Some(schema) = answer_schema(request) {
        let name = tool_name(&request.task);
        tools.push(json!({
            "name": name,
            "description": "Give the answer as this tool's input.",
            "input_schema": schema,
        }));
        choice = Some(if request.tools.is_empty() {
            json!({"type": "tool", "name": name})
        } else {
            json!({"type": "any"})
        });
    }
    if !request.tools.is_empty() {
        choice = match request.tool_choice.as_deref() {
            Some("required") => Some(json!({"type": "any"})),
            Some(kind @ ("auto" | "none")) => Some(json!({ "type": kind })),
            Some(name) => Some(json!({"type": "tool", "name": name})),
            None => choice,
        };
    }
    if !tools.is_empty() {
        body.insert("tools".into(), Json::Array(tools));
    }
    if let Some(choice) = choice {
        body.insert("tool_choice".into(), choice);
    }
}

impl Provider for Anthropic {
    fn name(&self) -> &str {
        "anthropic"
    }

    fn endpoint(&self) -> Option<&Endpoint> {
        Some(&self.endpoint)
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
            let name = tool_name(&request.task);
            if let Some(input) = answer_tool_input(&answer, &name) {
                return Ok(Response {
                    content: chosen(&input.to_string()),
                    usage: usage(&answer),
                    finish_reason: stop_reason(&answer),
                    reasoning: reasoning(&answer),
                    ..Response::default()
                });
            }
        }
        self.response(&answer)
    }

    fn streams(&self) -> bool {
        true
    }

    /// A task with an output schema is answered by a forced tool call, and tools are
    /// offered for tool calls: neither is text to show, so those requests are sent whole.
    fn stream(
        &self,
        request: &Request,
        cancel: &Cancel,
        sink: &mut dyn FnMut(&str),
    ) -> Result<Response> {
        if answer_schema(request).is_some() || !request.tools.is_empty() {
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
        let tool_calls = blocks
            .iter()
            .filter(|block| block.get("type").and_then(Json::as_str) == Some("tool_use"))
            .map(|block| ToolCall {
                id: block
                    .get("id")
                    .and_then(Json::as_str)
                    .unwrap_or_default()
                    .to_owned(),
                name: block
                    .get("name")
                    .and_then(Json::as_str)
                    .unwrap_or_default()
                    .to_owned(),
                arguments: block.get("input").cloned().unwrap_or(json!({})),
            })
            .collect();
        Ok(Response {
            content,
            usage: usage(answer),
            tool_calls,
            finish_reason: stop_reason(answer),
            reasoning: reasoning(answer),
            ..Response::default()
        })
    }
}

/// The text of the answer's `thinking` blocks: the model's reasoning, kept apart.
fn reasoning(answer: &Json) -> Option<String> {
    let thinking: String = answer
        .get("content")
        .and_then(Json::as_array)?
        .iter()
        .filter(|block| block.get("type").and_then(Json::as_str) == Some("thinking"))
        .filter_map(|block| block.get("thinking").and_then(Json::as_str))
        .collect();
    (!thinking.is_empty()).then_some(thinking)
}

/// `stop_reason`: `end_turn`, `max_tokens`, `stop_sequence`, `tool_use`…
fn stop_reason(answer: &Json) -> Option<String> {
    answer
        .get("stop_reason")
        .and_then(Json::as_str)
        .map(str::to_owned)
}

/// The conversation as the Messages API spells it: system messages go to the top-level
/// `system`; an assistant's tool calls are `tool_use` blocks; the results of one turn's
/// calls travel together in one user message of `tool_result` blocks.
fn wire_messages(messages: &[Message]) -> Result<Vec<Json>> {
    let mut wire: Vec<Json> = Vec::new();
    for message in messages {
        match message.role {
            Role::System => {}
            Role::User if message.attachments.is_empty() => {
                wire.push(json!({"role": "user", "content": message.content}));
            }
            Role::User => {
                let content = anthropic_content(&message.content, &message.attachments)?;
                wire.push(json!({"role": "user", "content": content}));
            }
            Role::Assistant if message.tool_calls.is_empty() => {
                wire.push(json!({"role": "assistant", "content": message.content}));
            }
            Role::Assistant => {
                let text = (!message.content.is_empty())
                    .then(|| json!({"type": "text", "text": message.content}));
                let uses = message.tool_calls.iter().map(|call| {
                    json!({"type": "tool_use", "id": call.id, "name": call.name, "input": call.arguments})
                });
                let blocks: Vec<Json> = text.into_iter().chain(uses).collect();
                wire.push(json!({"role": "assistant", "content": blocks}));
            }
            Role::Tool => {
                let block = json!({
                    "type": "tool_result",
                    "tool_use_id": message.tool_call_id.as_deref().unwrap_or_default(),
                    "content": message.content,
                });
                let joined = wire.last_mut().and_then(|last| {
                    let blocks = last.get_mut("content")?.as_array_mut()?;
                    let all_results = blocks
                        .iter()
                        .all(|b| b.get("type").and_then(Json::as_str) == Some("tool_result"));
                    all_results.then_some(blocks)
                });
                match joined {
                    Some(blocks) => blocks.push(block),
                    None => wire.push(json!({"role": "user", "content": [block]})),
                }
            }
        }
    }
    Ok(wire)
}

/// The schema sent as a forced tool: a JSON-Schema for an object (a tool's input is
/// always an object), or `:choice` as an enum.
fn answer_schema(request: &Request) -> Option<Json> {
    let object = request
        .json_schema()
        .filter(|s| s.get("type").and_then(Json::as_str) == Some("object"));
    match object {
        Some(schema) => Some(schema.clone()),
        None if !request.choice.is_empty() => Some(choice_schema(&request.choice)),
        None => None,
    }
}

/// The input of the answer tool's call (named `name`): the answer.
fn answer_tool_input<'a>(answer: &'a Json, name: &str) -> Option<&'a Json> {
    answer
        .get("content")
        .and_then(Json::as_array)?
        .iter()
        .filter(|block| block.get("type").and_then(Json::as_str) == Some("tool_use"))
        .find(|block| block.get("name").and_then(Json::as_str) == Some(name))
        .and_then(|block| block.get("input"))
}

/// `usage.input_tokens` and `usage.output_tokens`, when the server sent both.
fn usage(answer: &Json) -> Option<Usage> {
    crate::provider::caching::anthropic_usage(answer)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provider::message::single_turn;

    /// A provider for model `claude-x` with a cap of 100 tokens.
    fn claude_x() -> Anthropic {
        Anthropic::new(
            Endpoint {
                base_url: "http://127.0.0.1:9".into(),
                model: Some("claude-x".into()),
                ..Endpoint::default()
            },
            100,
        )
    }

    #[test]
    fn body_puts_system_at_the_top_and_keeps_key_order() {
        let provider = claude_x();
        let request = Request {
            messages: single_turn(Some("Be terse."), "Hi"),
            json_mode: true,
            ..Request::default()
        };
        assert_eq!(
            provider.body(&request).unwrap().to_string(),
            r#"{"model":"claude-x","max_tokens":100,"system":"Be terse.","messages":[{"role":"user","content":"Hi"}]}"#
        );
    }

    #[test]
    fn a_schema_beside_tools_adds_the_answer_tool_and_lets_the_model_choose() {
        let schema = json!({"type": "object", "properties": {"n": {"type": "integer"}}});
        let request = Request {
            task: "sum".into(),
            messages: single_turn(None, "Add"),
            schema: Some(schema.clone()),
            tools: vec![crate::provider::ToolSpec {
                name: "add".into(),
                description: "Add".into(),
                parameters: json!({"type": "object"}),
            }],
            ..Request::default()
        };
        let body = claude_x().body(&request).unwrap();
        let names: Vec<&str> = body["tools"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|t| t["name"].as_str())
            .collect();
        assert_eq!(names, ["add", "sum"]);
        assert_eq!(body["tool_choice"], json!({"type": "any"}));
        let answer = json!({"content": [
            {"type": "tool_use", "id": "t1", "name": "add", "input": {"a": 1}},
            {"type": "tool_use", "id": "t2", "name": "sum", "input": {"n": 3}},
        ]});
        assert_eq!(answer_tool_input(&answer, "sum"), Some(&json!({"n": 3})));
        assert_eq!(answer_tool_input(&answer, "other"), None);
    }

    #[test]
    fn tool_calls_are_tool_use_blocks_and_results_share_one_user_message() {
        let call = |id: &str| ToolCall {
            id: id.into(),
            name: "add".into(),
            arguments: json!({"a": 1}),
        };
        let messages = [
            Message::user("Add"),
            Message::tool_request("Adding.", vec![call("t1"), call("t2")]),
            Message::tool_result("t1", "3"),
            Message::tool_result("t2", "4"),
        ];
        assert_eq!(
            Json::Array(wire_messages(&messages).unwrap()),
            json!([
                {"role": "user", "content": "Add"},
                {"role": "assistant", "content": [
                    {"type": "text", "text": "Adding."},
                    {"type": "tool_use", "id": "t1", "name": "add", "input": {"a": 1}},
                    {"type": "tool_use", "id": "t2", "name": "add", "input": {"a": 1}},
                ]},
                {"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": "t1", "content": "3"},
                    {"type": "tool_result", "tool_use_id": "t2", "content": "4"},
                ]},
            ])
        );
    }

    #[test]
    fn options_are_spelled_as_the_messages_api_wants() {
        let provider = claude_x();
        let mut options = crate::provider::ModelOptions::default();
        for (name, value) in [
            ("max_tokens", json!(7)),
            ("temperature", json!(0)),
            ("stop", json!("END")),
            ("seed", json!(1)),
        ] {
            options.set(name, value).unwrap();
        }
        let request = Request {
            messages: single_turn(None, "Hi"),
            options,
            ..Request::default()
        };
        assert_eq!(
            provider.body(&request).unwrap().to_string(),
            r#"{"model":"claude-x","max_tokens":7,"messages":[{"role":"user","content":"Hi"}],"temperature":0,"stop_sequences":["END"]}"#
        );
    }

    #[test]
    fn usage_reads_input_and_output_tokens() {
        let answer = json!({"usage": {"input_tokens": 10, "output_tokens": 2}});
        assert_eq!(usage(&answer), Some(Usage::new(10, 2)));
    }
}

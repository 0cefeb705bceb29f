//! Model providers (the Handler of the seeds): a request in, text and usage out.
//!
//! A `Provider` is plain Rust and `Send + Sync`, so calls can run on worker threads
//! (`pmap`) while the interpreter thread goes on. Providers written in the language are
//! not `Provider`s: the task runtime calls them on the interpreter thread.

pub mod anthropic;
pub mod attachment;
pub mod batch;
pub mod caching;
pub mod cassette;
pub mod choice;
pub mod command;
mod config;
pub mod http;
pub mod kinds;
pub mod message;
pub mod openai;
pub mod options;
pub mod rate;
pub mod request_key;
pub mod sse;

/// What `Provider::complete` polls to stop early; implementing a provider takes it.
pub use crate::interrupt::Cancel;
pub use config::{build, is_known, EnvLookup, ProviderSettings};
pub use kinds::KNOWN;
pub use message::{Message, Role, ToolCall, ToolSpec};
pub use options::ModelOptions;

use crate::error::Result;
use serde_json::{json, Map, Value as Json};
use std::sync::Arc;

/// What an atomic task sends: `{task, system, prompt, model, params, round, issues,
/// messages, options, tools}`. `messages` is what chat providers are sent; `system` and `prompt` are the
/// task's rendered templates.
#[derive(Clone, Debug, Default)]
pub struct Request {
    pub task: String,
    pub system: Option<String>,
    pub prompt: String,
    pub model: Option<String>,
    /// The task's arguments by parameter name.
    pub params: serde_json::Map<String, Json>,
    /// 1 for the first round; audits with `:retries` run more.
    pub round: u32,
    /// The issues of the previous round (audits), empty in round 1.
    pub issues: Vec<Json>,
    /// The task declared `:output "json"`: ask for JSON where the server supports it.
    pub json_mode: bool,
    /// The conversation sent, system message first when there is one.
    pub messages: Vec<Message>,
    /// Sampling options, already layered (task over scope over provider over flag).
    pub options: ModelOptions,
    /// The tools offered to the model (a task's `:tools`).
    pub tools: Vec<ToolSpec>,
    /// The task's `:schema`: a type name (`"object"`…) or a JSON-Schema map, which
    /// providers pass on to the model as structured output.
    pub schema: Option<Json>,
    /// `:tool-choice`: `auto`, `required`, `none`, or the wire name of the one tool the
    /// model must call.
    pub tool_choice: Option<String>,
    /// `:choice`: the answer must be exactly one of these strings (empty: any answer).
    pub choice: Vec<String>,
    /// `:grammar`: a GBNF grammar the answer must follow, for servers that take one.
    pub grammar: Option<String>,
    /// The grammar is a help, not a demand (a code agent's grammar of the reader's
    /// syntax): a server that takes none gets the request without it.
    pub grammar_optional: bool,
    /// Prompt caching asked for, with the key OpenAI is sent as `prompt_cache_key` (the
    /// task's name or its `:prompt-cache-key`); `None` when off (`:cache-prefix false`).
    /// Not part of the request's map: it changes the cost of an answer, not the answer.
    pub prompt_cache: Option<String>,
}

impl Request {
    /// The schema when it is a JSON-Schema map (a type name only asks for JSON).
    pub fn json_schema(&self) -> Option<&Json> {
        self.schema.as_ref().filter(|s| s.is_object())
    }

    /// The request as the map a provider written in the language receives.
    pub fn to_json(&self) -> Json {
        Json::Object(self.to_map())
    }

    /// The request map plus `json_mode`: everything a provider is asked, for programs
    /// that answer (`command`) and for cassettes.
    pub fn to_json_with_mode(&self) -> Json {
        let mut map = self.to_map();
        map.insert("json_mode".into(), Json::Bool(self.json_mode));
        Json::Object(map)
    }

    fn to_map(&self) -> Map<String, Json> {
        let mut map: Map<String, Json> = [
            ("task", json!(self.task)),
            ("system", json!(self.system)),
            ("prompt", json!(self.prompt)),
            ("model", json!(self.model)),
            ("params", json!(self.params)),
            ("round", json!(self.round)),
            ("issues", json!(self.issues)),
            (
                "messages",
                self.messages.iter().map(Message::to_json).collect(),
            ),
            ("options", self.options.to_json()),
            ("tools", self.tools.iter().map(ToolSpec::to_json).collect()),
        ]
        .into_iter()
        .map(|(key, value)| (key.to_owned(), value))
        .collect();
        // Only a task with a schema has the key, so cassettes of other calls still match.
        if let Some(schema) = &self.schema {
            map.insert("schema".into(), schema.clone());
        }
        self.constraints_into(&mut map);
        let attachments: Vec<Json> = self
            .messages
            .iter()
            .flat_map(|m| &m.attachments)
            .map(attachment::Attachment::to_json)
            .collect();
        if !attachments.is_empty() {
            map.insert("attachments".into(), Json::Array(attachments));
        }
        map
    }

    /// `tool_choice`, `choice` and `grammar`, each only when the task sets it (so the
    /// cassettes and cache keys of other calls stay as they were).
    fn constraints_into(&self, map: &mut Map<String, Json>) {
        if let Some(choice) = &self.tool_choice {
            map.insert("tool_choice".into(), json!(choice));
        }
        if !self.choice.is_empty() {
            map.insert("choice".into(), json!(self.choice));
        }
        if let Some(grammar) = &self.grammar {
            map.insert("grammar".into(), json!(grammar));
        }
    }
}

/// The tokens of a call. `input_tokens` counts every input token, of which
/// `cached_input_tokens` were read from the provider's prompt cache and
/// `cache_write_tokens` written to it (each 0 when the provider reported none).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Usage {
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cached_input_tokens: u64,
    pub cache_write_tokens: u64,
}

impl Usage {
    /// Input and output tokens, nothing cached.
    pub fn new(input_tokens: u64, output_tokens: u64) -> Usage {
        Usage {
            input_tokens,
            output_tokens,
            ..Usage::default()
        }
    }
}

#[derive(Clone, Debug, Default)]
pub struct Response {
    pub content: String,
    /// As the server reported it; `None` means the runtime estimates it.
    pub usage: Option<Usage>,
    /// The tools the model asked to call instead of (or along with) answering.
    pub tool_calls: Vec<ToolCall>,
    /// Under a fallback chain: the provider that answered, and the ones that failed
    /// before it (`{"provider" … "error" …}`).
    pub fallback: Option<(String, Vec<Json>)>,
    /// A status the provider gave (`COMPLETE`, `CONTINUATION`, `FAILED`), kept in the result.
    pub status: Option<String>,
    /// Criteria the provider gave, kept in the result as `criteria`.
    pub criteria: Option<Json>,
    /// Why the model stopped, in the provider's own word (`stop`, `length`,
    /// `end_turn`, `max_tokens`…), when it said.
    pub finish_reason: Option<String>,
    /// The model's reasoning, when the provider returns it apart from the answer
    /// (Anthropic's `thinking` blocks, OpenAI-compatible `reasoning_content`).
    pub reasoning: Option<String>,
}

/// The stop reasons that mean the answer was cut off by the token limit: OpenAI's
/// `length`, Anthropic's `max_tokens`.
const TRUNCATED: &[&str] = &["length", "max_tokens"];

impl Response {
    /// The model stopped because it reached the token limit: the answer is cut off.
    pub fn truncated(&self) -> bool {
        self.finish_reason
            .as_deref()
            .is_some_and(|reason| TRUNCATED.contains(&reason))
    }
}

pub trait Provider: Send + Sync {
    /// The provider's name as `--provider` spells it.
    fn name(&self) -> &str;
    /// The HTTP server it sends to, when it has one: the next three answer from it.
    fn endpoint(&self) -> Option<&http::Endpoint> {
        None
    }
    /// The model used when a request names none (for the run log and prices).
    fn default_model(&self) -> Option<&str> {
        self.endpoint()
            .and_then(|endpoint| endpoint.model.as_deref())
    }
    /// The server it sends to, when it has one: answers of two servers never share a
    /// cache entry.
    fn base_url(&self) -> Option<&str> {
        self.endpoint().map(|endpoint| endpoint.base_url.as_str())
    }
    /// Sends one request; failures are `TASK_FAILURE` / `llm_error`.
    fn complete(&self, request: &Request, cancel: &Cancel) -> Result<Response>;
    /// Whether `stream` hands the text over in pieces as it arrives (else whole).
    fn streams(&self) -> bool {
        false
    }
    /// Sends one request, handing the answer's text to `sink` as it arrives; the answer
    /// is the one `complete` gives. A provider that cannot stream hands it over whole.
    fn stream(
        &self,
        request: &Request,
        cancel: &Cancel,
        sink: &mut dyn FnMut(&str),
    ) -> Result<Response> {
        whole_to_sink(self, request, cancel, sink)
    }
    /// What this provider must keep out of everything written (its API key, the
    /// credentials of its base URL): cassettes and run logs scrub with it.
    fn secrets(&self) -> crate::secrets::Secrets {
        self.endpoint()
            .map_or_else(crate::secrets::Secrets::default, http::Endpoint::secrets)
    }
    /// The provider's batch API, for `pmap :batch true`; providers without one answer
    /// each call directly.
    fn batch(&self) -> Option<&dyn batch::BatchApi> {
        None
    }
}

/// `complete`, then the whole text to `sink`: how a provider that cannot stream a call
/// streams it.
pub fn whole_to_sink(
    provider: &(impl Provider + ?Sized),
    request: &Request,
    cancel: &Cancel,
    sink: &mut dyn FnMut(&str),
) -> Result<Response> {
    let response = provider.complete(request, cancel)?;
    sink(&response.content);
    Ok(response)
}

/// The default provider: answers with the rendered prompt. Offline.
pub struct Echo;

impl Provider for Echo {
    fn name(&self) -> &str {
        "echo"
    }

    fn complete(&self, request: &Request, _cancel: &Cancel) -> Result<Response> {
        Ok(Response {
            content: request.prompt.clone(),
            ..Response::default()
        })
    }
}

/// What answers when no provider is configured: every model call fails, saying how to
/// configure one. `echo` answers only when it is named.
pub struct Unconfigured;

impl Provider for Unconfigured {
    fn name(&self) -> &str {
        "none"
    }

    fn complete(&self, _request: &Request, _cancel: &Cancel) -> Result<Response> {
        Err(crate::error::Error::task_failure(
            crate::error::Reason::LlmError,
            kinds::how_to_configure(),
        ))
    }
}

/// The provider `--provider`, `--model` and `--base-url` name, with the environment's
/// keys and defaults (see `docs/PROVIDERS.md`).
pub fn from_settings(settings: &ProviderSettings) -> Result<Arc<dyn Provider>> {
    config::build_from_settings(settings, &env_var)
}

/// The provider `(set-provider! :KIND {options…})` asks for: `kind` names a row of
/// `kinds::KINDS` (or is `record:INNER`); `options` is a JSON map (or null) of the options in `docs/PROVIDERS.md`. A
/// `base_url` or `api_key_env` among them must be one `capabilities` allows.
pub fn from_language(
    kind: &str,
    options: &Json,
    capabilities: &crate::capabilities::Capabilities,
) -> Result<Arc<dyn Provider>> {
    config::build_checked(kind, options, &env_var, capabilities)
}

/// An environment variable, where set to something: `OPENAI_API_KEY=` counts as unset.
fn env_var(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|value| !value.is_empty())
}

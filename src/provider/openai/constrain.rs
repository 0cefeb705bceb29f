//! What an OpenAI-compatible request constrains beyond the schema: the tool choice, and
//! `:choice` and `:grammar`. A grammar goes only to a server that takes one — llama.cpp's
//! server, recognised once per base URL by its `/props` endpoint (an object with
//! `default_generation_settings`, beside `/v1`); `:choice` goes there as a grammar and
//! elsewhere as a JSON-Schema enum (`response_format`).

use super::OpenAi;
use crate::error::{Error, Reason, Result};
use crate::interrupt::Cancel;
use crate::provider::choice::{choice_grammar, choice_schema};
use crate::provider::Request;
use serde_json::{json, Map, Value as Json};
use std::collections::HashMap;
use std::sync::{LazyLock, Mutex};

/// Whether the server at a base URL takes a GBNF `grammar`, as found for this run.
static GRAMMAR_SERVERS: LazyLock<Mutex<HashMap<String, bool>>> =
    LazyLock::new(|| Mutex::new(HashMap::new()));

impl OpenAi {
    /// Whether this server takes a GBNF `grammar`: llama.cpp's server does. Asked once
    /// per base URL (a `GET /props`), only by requests with `:choice` or `:grammar`.
    pub(crate) fn takes_grammar(&self) -> bool {
        let base = self.endpoint().base_url.trim_end_matches('/').to_owned();
        if let Some(known) = GRAMMAR_SERVERS
            .lock()
            .ok()
            .and_then(|s| s.get(&base).copied())
        {
            return known;
        }
        let root = base.strip_suffix("/v1").unwrap_or(&base);
        let props = self.client().get_json(
            &format!("{root}/props"),
            &self.headers(),
            &Cancel::default(),
        );
        let llama = props.is_ok_and(|p| p.get("default_generation_settings").is_some());
        if let Ok(mut servers) = GRAMMAR_SERVERS.lock() {
            servers.insert(base, llama);
        }
        llama
    }

    /// The grammar to send (`:grammar`, or `:choice` as one) when the server takes
    /// grammars; a `:grammar` for a server that takes none is refused before sending.
    pub(crate) fn grammar_for(&self, request: &Request) -> Result<Option<String>> {
        if request.grammar.is_none() && request.choice.is_empty() {
            return Ok(None);
        }
        if self.takes_grammar() {
            return Ok(request
                .grammar
                .clone()
                .or_else(|| Some(choice_grammar(&request.choice))));
        }
        match request.grammar {
            Some(_) if !request.grammar_optional => Err(Error::task_failure(
                Reason::LlmError,
                format!(
                    "the server at {} takes no :grammar (llama.cpp's server does; \
                     :choice works everywhere)",
                    self.endpoint().base_url
                ),
            )
            .with_detail("option", json!("grammar"))),
            _ => Ok(None),
        }
    }
}

/// The schema the answer is asked to match: the task's, or `:choice` as an enum.
pub fn wanted_schema(request: &Request) -> Option<Json> {
    match request.json_schema() {
        Some(schema) => Some(schema.clone()),
        None if !request.choice.is_empty() => Some(choice_schema(&request.choice)),
        None => None,
    }
}

/// `tool_choice` as chat completions spell it: `"auto"`, `"required"`, `"none"`, or
/// `{"type": "function", "function": {"name": …}}` for one tool. Sent only with tools.
pub fn tool_choice_into(request: &Request, body: &mut Map<String, Json>) {
    let Some(choice) = request.tool_choice.as_deref() else {
        return;
    };
    if request.tools.is_empty() {
        return;
    }
    let wire = match choice {
        "auto" | "required" | "none" => json!(choice),
        name => json!({"type": "function", "function": {"name": name}}),
    };
    body.insert("tool_choice".into(), wire);
}

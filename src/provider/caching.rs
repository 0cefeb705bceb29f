//! Prompt caching: what a request asks of the provider's cache, and the cached tokens
//! its answer reports.
//!
//! `anthropic` caches a prefix only where the request marks it with `cache_control`:
//! the tools and the system prompt are marked when they are long enough for the API to
//! cache them. `openai` caches long prefixes by itself; `prompt_cache_key` tells it
//! which requests share one (the task's name unless `:prompt-cache-key` says otherwise).

use super::{Request, Usage};
use serde_json::{json, Map, Value as Json};

/// The marker Anthropic takes on the last block of a prefix to cache.
fn ephemeral() -> Json {
    json!({"type": "ephemeral"})
}

/// The fewest tokens Anthropic caches for `model` (its documented minimums): 4096 for
/// Claude Opus 4.5 and Haiku 4.5, 2048 for the Haiku 3 family, 1024 for the others (and
/// for models it does not know). A shorter prefix is sent unmarked.
pub fn anthropic_minimum(model: &str) -> u64 {
    const FOUR_K: &[&str] = &["claude-opus-4-5", "claude-haiku-4-5"];
    const TWO_K: &[&str] = &["claude-3-5-haiku", "claude-3-haiku"];
    if FOUR_K.iter().any(|family| model.starts_with(family)) {
        4096
    } else if TWO_K.iter().any(|family| model.starts_with(family)) {
        2048
    } else {
        1024
    }
}

/// Tokens of a JSON value or text as sent, estimated at four bytes each: enough to tell
/// a prefix worth caching from one that is not.
fn estimated_tokens(text: &str) -> u64 {
    (text.len() as u64) / 4
}

/// Marks the tools and the system prompt of a Messages body with `cache_control` when
/// the request asks for caching and the prefix up to each reaches the model's minimum.
/// The API caches tools, then system, then messages: the system's mark covers the
/// tools before it. A marked system prompt is sent as one text block.
pub fn mark_anthropic_prefix(request: &Request, model: &str, body: &mut Map<String, Json>) {
    if request.prompt_cache.is_none() {
        return;
    }
    let minimum = anthropic_minimum(model);
    let mut prefix = 0;
    if let Some(Json::Array(tools)) = body.get_mut("tools") {
        prefix = estimated_tokens(&Json::Array(tools.clone()).to_string());
        if let Some(Json::Object(last)) = tools.last_mut().filter(|_| prefix >= minimum) {
            last.insert("cache_control".into(), ephemeral());
        }
    }
    if let Some(Json::String(system)) = body.get("system") {
        prefix += estimated_tokens(system);
        if prefix >= minimum {
            let block = json!([{"type": "text", "text": system, "cache_control": ephemeral()}]);
            body.insert("system".into(), block);
        }
    }
}

/// `prompt_cache_key` in a chat-completions body, when the request asks for caching
/// under a key.
pub fn add_openai_key(request: &Request, body: &mut Map<String, Json>) {
    if let Some(key) = request.prompt_cache.as_deref().filter(|k| !k.is_empty()) {
        body.insert("prompt_cache_key".into(), json!(key));
    }
}

/// A chat completion's usage: `prompt_tokens` (cached ones included) and
/// `completion_tokens`, with `prompt_tokens_details.cached_tokens` when given.
pub fn openai_usage(answer: &Json) -> Option<Usage> {
    let mut usage = super::http::usage(answer, "prompt_tokens", "completion_tokens")?;
    usage.cached_input_tokens = count(answer, "/usage/prompt_tokens_details/cached_tokens");
    Some(usage)
}

/// A Messages answer's usage. Anthropic counts `input_tokens` apart from the tokens
/// read from the cache (`cache_read_input_tokens`) and written to it
/// (`cache_creation_input_tokens`); tasklisp's `input_tokens` is all three.
pub fn anthropic_usage(answer: &Json) -> Option<Usage> {
    let mut usage = super::http::usage(answer, "input_tokens", "output_tokens")?;
    usage.cached_input_tokens = count(answer, "/usage/cache_read_input_tokens");
    usage.cache_write_tokens = count(answer, "/usage/cache_creation_input_tokens");
    usage.input_tokens = usage
        .input_tokens
        .saturating_add(usage.cached_input_tokens)
        .saturating_add(usage.cache_write_tokens);
    Some(usage)
}

/// A token count at `pointer`, 0 when absent or null.
fn count(answer: &Json, pointer: &str) -> u64 {
    answer.pointer(pointer).and_then(Json::as_u64).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn caching(system: &str, tools: Json) -> Map<String, Json> {
        let request = Request {
            prompt_cache: Some("t".into()),
            ..Request::default()
        };
        let mut body = Map::new();
        body.insert("tools".into(), tools);
        body.insert("system".into(), json!(system));
        mark_anthropic_prefix(&request, "claude-sonnet-4-5", &mut body);
        body
    }

    #[test]
    fn a_long_system_prompt_is_marked_and_a_short_one_is_not() {
        let long = "x".repeat(4 * 1024);
        let body = caching(&long, json!([]));
        assert_eq!(
            body["system"],
            json!([{"type": "text", "text": long, "cache_control": {"type": "ephemeral"}}])
        );
        assert_eq!(caching("short", json!([]))["system"], json!("short"));
    }

    #[test]
    fn long_tools_mark_their_last_tool() {
        let tool = |d: &str| json!({"name": "t", "description": d});
        let body = caching("s", json!([tool("a"), tool(&"y".repeat(4200))]));
        assert_eq!(body["tools"][0].get("cache_control"), None);
        assert_eq!(
            body["tools"][1]["cache_control"],
            json!({"type": "ephemeral"})
        );
        assert!(
            body["system"].is_array(),
            "the system after the tools is marked too"
        );
    }

    #[test]
    fn minimums_follow_the_model_family() {
        assert_eq!(anthropic_minimum("claude-haiku-4-5-20251001"), 4096);
        assert_eq!(anthropic_minimum("claude-3-haiku-20240307"), 2048);
        assert_eq!(anthropic_minimum("claude-sonnet-4-5"), 1024);
    }

    #[test]
    fn cached_tokens_are_read_from_both_wire_forms() {
        let openai = json!({"usage": {"prompt_tokens": 2000, "completion_tokens": 5,
            "prompt_tokens_details": {"cached_tokens": 1920}}});
        let usage = openai_usage(&openai).unwrap();
        assert_eq!(
            (usage.input_tokens, usage.cached_input_tokens),
            (2000, 1920)
        );
        let anthropic = json!({"usage": {"input_tokens": 10, "output_tokens": 5,
            "cache_read_input_tokens": 1500, "cache_creation_input_tokens": 300}});
        let usage = anthropic_usage(&anthropic).unwrap();
        assert_eq!(
            usage,
            Usage {
                input_tokens: 1810,
                output_tokens: 5,
                cached_input_tokens: 1500,
                cache_write_tokens: 300
            }
        );
    }
}

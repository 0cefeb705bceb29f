//! A request's identity: the canonical form cassettes store and replay matches by, and
//! the cache key derived from it. One home, so the cache and cassettes agree on what
//! makes two requests the same.

use super::message::single_turn;
use super::{Message, Request};
use serde_json::{json, Value as Json};

/// The request in the form cassettes store and match: keys sorted, and only what does
/// not follow from the rest (see [`canonical`]).
pub fn canonical_request(request: &Request) -> Json {
    canonical(request.to_json_with_mode())
}

/// Leaves out what follows from the other fields, so cassettes recorded before those
/// fields were sent stay valid: `schema` (from the task's definition), empty `options`
/// and `tools`, and `messages` when they are just the system and user message of
/// `system` and `prompt`. Applied to recorded requests too, so both forms match.
pub(super) fn canonical(mut request: Json) -> Json {
    if let Some(fields) = request.as_object_mut() {
        fields.remove("schema");
        let empty = |value: Option<&Json>| match value {
            Some(Json::Object(map)) => map.is_empty(),
            Some(Json::Array(list)) => list.is_empty(),
            _ => false,
        };
        for key in ["options", "tools"] {
            if empty(fields.get(key)) {
                fields.remove(key);
            }
        }
        let system = fields.get("system").and_then(Json::as_str);
        let prompt = fields.get("prompt").and_then(Json::as_str).unwrap_or("");
        let single: Vec<Json> = single_turn(system, prompt)
            .iter()
            .map(Message::to_json)
            .collect();
        if fields.get("messages") == Some(&Json::Array(single)) {
            fields.remove("messages");
        }
    }
    request.sort_all_objects();
    request
}

/// Where a model call goes: the provider, its server and the model.
#[derive(Clone, Debug, Default)]
pub struct Target {
    pub provider: String,
    pub base_url: Option<String>,
    pub model: Option<String>,
}

/// The cache key: a digest of what reaches the model (provider, its base URL, model,
/// and the request without the task's name, arguments and round, which only shape the
/// text). The schema is sent to the model as structured output, so it is part of the
/// key, though cassettes leave it out of the requests they match.
/// It starts from the request's canonical form ([`canonical_request`]), which the
/// journal needs too, so a call makes it once.
pub fn cache_key_from(mut canonical: Json, request: &Request, target: &Target) -> String {
    if let Some(map) = canonical.as_object_mut() {
        for key in ["task", "params", "round", "issues"] {
            map.remove(key);
        }
        if let Some(schema) = &request.schema {
            map.insert("schema".into(), schema.clone());
        }
        map.insert("provider".into(), json!(target.provider));
        map.insert("model".into(), json!(target.model));
        // Only a provider with a server has the key, so older entries stay valid.
        if let Some(base_url) = &target.base_url {
            map.insert("base_url".into(), json!(base_url));
        }
    }
    crate::digest::sha256_hex(canonical.to_string().as_bytes(), 32)
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    fn cache_key(request: &Request, target: &Target) -> String {
        cache_key_from(canonical_request(request), request, target)
    }

    /// A task call's request with arguments and its user message (cassette tests too).
    pub(in crate::provider) fn request(prompt: &str) -> Request {
        let mut params = serde_json::Map::new();
        params.insert("z".into(), json!(1));
        params.insert("a".into(), json!({"y": 2, "b": 3}));
        Request {
            task: "t".into(),
            prompt: prompt.into(),
            messages: vec![Message::user(prompt)],
            params,
            round: 1,
            ..Request::default()
        }
    }

    #[test]
    fn the_canonical_request_sorts_keys_at_every_level() {
        let text = canonical_request(&request("p")).to_string();
        assert!(text.starts_with(
            r#"{"issues":[],"json_mode":false,"model":null,"params":{"a":{"b":3,"y":2},"z":1}"#
        ));
    }

    #[test]
    fn what_follows_from_the_rest_is_left_out_but_other_messages_are_kept() {
        let plain = canonical_request(&request("p"));
        for key in ["messages", "options", "tools", "schema"] {
            assert!(plain.get(key).is_none(), "{key}");
        }
        let mut continued = request("p");
        continued.messages.push(Message::assistant("a"));
        let kept = canonical_request(&continued);
        assert_eq!(kept["messages"].as_array().map(Vec::len), Some(2));
        // A recorded request written with every field matches the short form.
        let full = canonical(request("p").to_json_with_mode());
        assert_eq!(full, plain);
        let keys: Vec<&String> = full.as_object().unwrap().keys().collect();
        assert!(keys.windows(2).all(|pair| pair[0] < pair[1]), "{keys:?}");
    }

    /// A request with no arguments or messages, as a task call's first round sends.
    fn plain(prompt: &str) -> Request {
        Request {
            task: "t".into(),
            prompt: prompt.into(),
            round: 1,
            ..Request::default()
        }
    }

    fn target(provider: &str, base_url: Option<&str>, model: &str) -> Target {
        Target {
            provider: provider.into(),
            base_url: base_url.map(str::to_owned),
            model: Some(model.into()),
        }
    }

    #[test]
    fn the_cache_key_is_what_reaches_the_model() {
        let openai = target("openai", Some("http://a/v1"), "m");
        let a = cache_key(&plain("hi"), &openai);
        let mut renamed = plain("hi");
        renamed.task = "other".into();
        renamed.round = 2;
        assert_eq!(a, cache_key(&renamed, &openai));
        assert_ne!(a, cache_key(&plain("ho"), &openai));
        let others = [
            target("anthropic", Some("http://a/v1"), "m"),
            target("openai", Some("http://a/v1"), "n"),
            target("openai", Some("http://b/v1"), "m"),
            target("openai", None, "m"),
        ];
        for other in &others {
            assert_ne!(a, cache_key(&plain("hi"), other), "{other:?}");
        }
        assert_eq!(a.len(), 64);
    }

    #[test]
    fn attachments_key_by_their_digest() {
        use crate::provider::attachment::Attachment;
        let openai = target("openai", Some("http://a/v1"), "m");
        let with_file = |bytes: &[u8]| {
            let mut message = Message::user("hi");
            message.attachments = vec![Attachment::file("a.png", "image/png", bytes.to_vec())];
            Request {
                messages: vec![message],
                ..request("hi")
            }
        };
        let key = cache_key(&with_file(b"one"), &openai);
        assert_eq!(key, cache_key(&with_file(b"one"), &openai));
        assert_ne!(key, cache_key(&with_file(b"two"), &openai));
        assert_ne!(key, cache_key(&request("hi"), &openai));
    }

    #[test]
    fn two_schemas_never_share_an_answer() {
        let openai = target("openai", Some("http://a/v1"), "m");
        let with_schema = |schema: Json| Request {
            schema: Some(schema),
            json_mode: true,
            ..plain("a cat")
        };
        let name = with_schema(json!({"type": "object", "required": ["name"]}));
        let age = with_schema(json!({"type": "object", "required": ["age"]}));
        let object = with_schema(json!("object"));
        let keys = [&name, &age, &object].map(|r| cache_key(r, &openai));
        assert_ne!(keys[0], keys[1]);
        assert_ne!(keys[0], keys[2]);
        assert_ne!(keys[1], keys[2]);
        assert_eq!(keys[0], cache_key(&name, &openai));
    }
}

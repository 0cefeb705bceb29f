//! Structured output: telling the model the JSON Schema its answer must match.
//!
//! OpenAI-compatible servers differ in what they accept. OpenAI and vLLM take
//! `response_format {"type": "json_schema", …}`; llama.cpp's Python server refuses it but
//! constrains the answer given `{"type": "json_object", "schema": S}`; others only know
//! `{"type": "json_object"}`. A server that answers a richer form with an error naming
//! `response_format` is asked again with the next form, and the form that worked is
//! remembered per base URL for the rest of the run.

use crate::error::Error;
use crate::provider::message::tool_name;
use serde_json::{json, Value as Json};
use std::collections::HashMap;
use std::sync::{LazyLock, Mutex};

/// How an OpenAI-compatible server is asked for JSON, richest first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JsonForm {
    /// `{"type": "json_schema", "json_schema": {"name", "schema", "strict"}}`
    JsonSchema,
    /// `{"type": "json_object", "schema": S}`
    JsonObjectWithSchema,
    /// `{"type": "json_object"}`
    JsonObject,
}

impl JsonForm {
    /// The next, plainer form to try after a server refused this one.
    pub fn plainer(self) -> Option<JsonForm> {
        match self {
            JsonForm::JsonSchema => Some(JsonForm::JsonObjectWithSchema),
            JsonForm::JsonObjectWithSchema => Some(JsonForm::JsonObject),
            JsonForm::JsonObject => None,
        }
    }
}

/// The form that worked per base URL, for this run.
static REMEMBERED: LazyLock<Mutex<HashMap<String, JsonForm>>> =
    LazyLock::new(|| Mutex::new(HashMap::new()));

/// The form to start with for a server: the one that last worked, else the richest.
pub fn remembered(base_url: &str) -> JsonForm {
    REMEMBERED
        .lock()
        .ok()
        .and_then(|forms| forms.get(base_url).copied())
        .unwrap_or(JsonForm::JsonSchema)
}

pub fn remember(base_url: &str, form: JsonForm) {
    if let Ok(mut forms) = REMEMBERED.lock() {
        forms.insert(base_url.to_owned(), form);
    }
}

/// The `response_format` of a request for JSON matching `schema` (a JSON-Schema map),
/// in the given form.
pub fn response_format(form: JsonForm, task: &str, schema: &Json) -> Json {
    match form {
        JsonForm::JsonSchema => json!({
            "type": "json_schema",
            "json_schema": {"name": tool_name(task), "schema": schema, "strict": is_strict(schema)},
        }),
        JsonForm::JsonObjectWithSchema => json!({"type": "json_object", "schema": schema}),
        JsonForm::JsonObject => json!({"type": "json_object"}),
    }
}

/// Whether a server refused a request because of its `response_format`: an HTTP
/// error (4xx or 5xx) whose body names the field.
pub fn refused_response_format(error: &Error) -> bool {
    let status = error.details().get("status").and_then(Json::as_u64);
    let body = error.details().get("body").and_then(Json::as_str);
    matches!(status, Some(400..=599)) && body.is_some_and(|b| b.contains("response_format"))
}

/// Strict structured output is asked for only when the schema already follows its
/// rules: every object lists all its properties in `required` and sets
/// `additionalProperties: false`. The schema is never rewritten to fit.
pub fn is_strict(schema: &Json) -> bool {
    let mut pending = vec![schema];
    while let Some(node) = pending.pop() {
        let Json::Object(map) = node else {
            if let Json::Array(items) = node {
                pending.extend(items);
            }
            continue;
        };
        if let Some(Json::Object(properties)) = map.get("properties") {
            let required: Vec<&str> = map
                .get("required")
                .and_then(Json::as_array)
                .map(|r| r.iter().filter_map(Json::as_str).collect())
                .unwrap_or_default();
            let closed = map.get("additionalProperties") == Some(&Json::Bool(false));
            if !closed || properties.keys().any(|k| !required.contains(&k.as_str())) {
                return false;
            }
        } else if map.get("type").and_then(Json::as_str) == Some("object")
            && map.get("additionalProperties") != Some(&Json::Bool(false))
        {
            return false;
        }
        pending.extend(map.values());
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strict_only_when_every_object_is_closed_and_fully_required() {
        let closed = json!({"type": "object", "properties": {"a": {"type": "string"}},
            "required": ["a"], "additionalProperties": false});
        assert!(is_strict(&closed));
        let open =
            json!({"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]});
        assert!(!is_strict(&open));
        let optional = json!({"type": "object", "properties": {"a": {}, "b": {}},
            "required": ["a"], "additionalProperties": false});
        assert!(!is_strict(&optional));
        let nested = json!({"type": "array", "items": open});
        assert!(!is_strict(&nested));
        assert!(is_strict(
            &json!({"type": "array", "items": {"type": "number"}})
        ));
    }

    #[test]
    fn the_forms_go_from_richest_to_plainest() {
        let schema = json!({"type": "object"});
        assert_eq!(
            response_format(JsonForm::JsonSchema, "tag it", &schema),
            json!({"type": "json_schema", "json_schema": {"name": "tag_it", "schema": schema, "strict": false}})
        );
        assert_eq!(
            JsonForm::JsonSchema.plainer(),
            Some(JsonForm::JsonObjectWithSchema)
        );
        assert_eq!(JsonForm::JsonObject.plainer(), None);
    }
}

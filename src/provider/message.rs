//! The messages of a request: the conversation a provider is sent. Every request has
//! them — a plain task call sends its system and user message; conversations, re-asking
//! and tool loops send longer lists with assistant and tool messages.

use serde_json::{json, Map, Value as Json};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    System,
    User,
    Assistant,
    /// The result of a tool call, answering the assistant's call with `tool_call_id`.
    Tool,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::System => "system",
            Role::User => "user",
            Role::Assistant => "assistant",
            Role::Tool => "tool",
        }
    }

    pub fn parse(name: &str) -> Option<Role> {
        Some(match name {
            "system" => Role::System,
            "user" => Role::User,
            "assistant" => Role::Assistant,
            "tool" => Role::Tool,
            _ => return None,
        })
    }
}

/// A tool call the model asked for. `arguments` is what the model sent: normally a JSON
/// object; arguments that were not JSON at all are kept as the raw string so the tool
/// loop can tell the model what was wrong.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolCall {
    pub id: String,
    pub name: String,
    pub arguments: Json,
}

impl ToolCall {
    pub fn to_json(&self) -> Json {
        json!({"id": self.id, "name": self.name, "arguments": self.arguments})
    }

    /// The arguments as the text a wire format carries (OpenAI sends a JSON string).
    pub fn arguments_text(&self) -> String {
        match &self.arguments {
            Json::String(raw) => raw.clone(),
            other => other.to_string(),
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Message {
    pub role: Role,
    pub content: String,
    /// An assistant's tool calls (empty otherwise).
    pub tool_calls: Vec<ToolCall>,
    /// For a `tool` message: the call it answers.
    pub tool_call_id: Option<String>,
    /// Files or URLs sent with a user message (a task's `:attachments`).
    pub attachments: Vec<super::attachment::Attachment>,
}

impl Message {
    pub fn new(role: Role, content: impl Into<String>) -> Message {
        Message {
            role,
            content: content.into(),
            tool_calls: Vec::new(),
            tool_call_id: None,
            attachments: Vec::new(),
        }
    }

    pub fn system(content: impl Into<String>) -> Message {
        Message::new(Role::System, content)
    }

    pub fn user(content: impl Into<String>) -> Message {
        Message::new(Role::User, content)
    }

    pub fn assistant(content: impl Into<String>) -> Message {
        Message::new(Role::Assistant, content)
    }

    /// The assistant's turn that asked for tools.
    pub fn tool_request(content: impl Into<String>, calls: Vec<ToolCall>) -> Message {
        Message {
            tool_calls: calls,
            ..Message::assistant(content)
        }
    }

    /// A tool's result (or error text) sent back for the call `id`.
    pub fn tool_result(id: impl Into<String>, content: impl Into<String>) -> Message {
        Message {
            tool_call_id: Some(id.into()),
            ..Message::new(Role::Tool, content)
        }
    }

    /// `{"role" … "content" …}`, plus `tool_calls`, `tool_call_id` or `attachments` (their
    /// digests, not their bytes) where they apply: what procedure providers see,
    /// cassettes store and the run log keeps.
    pub fn to_json(&self) -> Json {
        let mut map = Map::new();
        map.insert("role".into(), json!(self.role.as_str()));
        map.insert("content".into(), json!(self.content));
        if !self.tool_calls.is_empty() {
            let calls = self.tool_calls.iter().map(ToolCall::to_json).collect();
            map.insert("tool_calls".into(), Json::Array(calls));
        }
        if let Some(id) = &self.tool_call_id {
            map.insert("tool_call_id".into(), json!(id));
        }
        if !self.attachments.is_empty() {
            let attachments = self.attachments.iter().map(|a| a.to_json()).collect();
            map.insert("attachments".into(), Json::Array(attachments));
        }
        Json::Object(map)
    }

    /// Reads the form `to_json` writes; the error says what is wrong.
    pub fn from_json(value: &Json) -> Result<Message, String> {
        let map = value
            .as_object()
            .ok_or("a message is a map {\"role\" … \"content\" …}")?;
        let role = map
            .get("role")
            .and_then(Json::as_str)
            .and_then(Role::parse)
            .ok_or("a message's \"role\" is \"system\", \"user\", \"assistant\" or \"tool\"")?;
        let content = match map.get("content") {
            Some(Json::String(text)) => text.clone(),
            None | Some(Json::Null) => String::new(),
            Some(_) => return Err("a message's \"content\" is a string".into()),
        };
        let tool_calls = match map.get("tool_calls") {
            None | Some(Json::Null) => Vec::new(),
            Some(Json::Array(calls)) => calls
                .iter()
                .map(tool_call_from_json)
                .collect::<Result<_, _>>()?,
            Some(_) => return Err("a message's \"tool_calls\" is a list".into()),
        };
        let tool_call_id = match map.get("tool_call_id") {
            Some(Json::String(id)) => Some(id.clone()),
            None | Some(Json::Null) => None,
            Some(_) => return Err("a message's \"tool_call_id\" is a string".into()),
        };
        // Attachments come back as their digests only: a message read from data has none.
        Ok(Message {
            role,
            content,
            tool_calls,
            tool_call_id,
            attachments: Vec::new(),
        })
    }
}

/// `{"id" … "name" … "arguments" {…}}`; `id` may be missing (a procedure provider need
/// not invent one) and is then left empty for the caller to number.
pub fn tool_call_from_json(value: &Json) -> Result<ToolCall, String> {
    let text = |key: &str| value.get(key).and_then(Json::as_str).map(str::to_owned);
    let name = text("name").ok_or("a tool call needs a \"name\" string")?;
    Ok(ToolCall {
        id: text("id").unwrap_or_default(),
        name,
        arguments: value.get("arguments").cloned().unwrap_or(json!({})),
    })
}

/// A tool offered to the model: a task's name, description and parameter schema.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolSpec {
    pub name: String,
    pub description: String,
    /// A JSON Schema of the arguments (an object).
    pub parameters: Json,
}

impl ToolSpec {
    pub fn to_json(&self) -> Json {
        json!({"name": self.name, "description": self.description, "parameters": self.parameters})
    }
}

/// The system messages' text, a blank line apart; `None` when there are none.
pub fn system_text(messages: &[Message]) -> Option<String> {
    let system: Vec<&str> = messages
        .iter()
        .filter(|m| m.role == Role::System)
        .map(|m| m.content.as_str())
        .collect();
    (!system.is_empty()).then(|| system.join("\n\n"))
}

/// The messages of a single-shot call: the system message when there is one, then the
/// user's prompt.
pub fn single_turn(system: Option<&str>, prompt: &str) -> Vec<Message> {
    system
        .map(Message::system)
        .into_iter()
        .chain([Message::user(prompt)])
        .collect()
}

/// A task name as a schema or tool name: letters, digits, `_` and `-`, at most 64.
pub fn tool_name(task: &str) -> String {
    let name: String = task
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .take(64)
        .collect();
    if name.is_empty() {
        "answer".to_owned()
    } else {
        name
    }
}

/// Whether OpenAI and Anthropic take `name` as a tool's: `^[a-zA-Z0-9_-]{1,64}$`.
pub fn is_wire_tool_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

/// The name a task is offered under as a tool: its own when the providers take it;
/// else its letters, digits, `_` and `-` (others become `_`, at most 55), `-`, and the
/// first 8 hex digits of the SHA-256 of its whole name — `rv/summarize` is
/// `rv_summarize-` and 8 hex digits. The same task always gets the same name, and two
/// names that differ anywhere get different ones.
pub fn wire_tool_name(task: &str) -> String {
    if is_wire_tool_name(task) {
        return task.to_owned();
    }
    let base: String = task
        .chars()
        .map(
            |c| match c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                true => c,
                false => '_',
            },
        )
        .take(55)
        .collect();
    let hash = crate::digest::sha256_hex(task.as_bytes(), 4);
    format!("{base}-{hash}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_names_the_providers_refuse_are_sent_under_a_derived_name() {
        assert_eq!(wire_tool_name("add"), "add");
        assert_eq!(wire_tool_name("a-b_C9"), "a-b_C9");
        let derived = wire_tool_name("rv/summarize");
        assert!(derived.starts_with("rv_summarize-"), "{derived}");
        assert_eq!(derived.len(), "rv_summarize-".len() + 8);
        assert!(is_wire_tool_name(&derived));
        assert_eq!(wire_tool_name("rv/summarize"), derived);
        assert_ne!(wire_tool_name("rv.summarize"), derived);
        let long = "x/".repeat(100);
        assert!(is_wire_tool_name(&wire_tool_name(&long)));
        assert!(is_wire_tool_name(&wire_tool_name("")));
        assert!(is_wire_tool_name(&wire_tool_name("résumé")));
        assert!(!is_wire_tool_name(&"a".repeat(65)));
    }

    #[test]
    fn a_single_turn_is_system_then_user() {
        let messages: Vec<Json> = single_turn(Some("Be terse."), "Hi")
            .iter()
            .map(Message::to_json)
            .collect();
        assert_eq!(
            Json::Array(messages),
            json!([{"role": "system", "content": "Be terse."}, {"role": "user", "content": "Hi"}])
        );
        assert_eq!(single_turn(None, "Hi"), vec![Message::user("Hi")]);
    }

    #[test]
    fn messages_round_trip_through_json() {
        let call = ToolCall {
            id: "c1".into(),
            name: "add".into(),
            arguments: json!({"a": 1}),
        };
        for message in [
            Message::user("x"),
            Message::tool_request("", vec![call]),
            Message::tool_result("c1", "3"),
        ] {
            assert_eq!(Message::from_json(&message.to_json()), Ok(message));
        }
    }

    #[test]
    fn bad_messages_say_what_is_wrong() {
        for bad in [
            json!("hi"),
            json!({"role": "robot", "content": "x"}),
            json!({"role": "user", "content": 3}),
            json!({"role": "assistant", "tool_calls": [{"arguments": {}}]}),
        ] {
            assert!(Message::from_json(&bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn raw_arguments_stay_raw_on_the_wire() {
        let call = |arguments| ToolCall {
            id: "1".into(),
            name: "f".into(),
            arguments,
        };
        assert_eq!(call(json!("{oops")).arguments_text(), "{oops");
        assert_eq!(call(json!({"a": 1})).arguments_text(), r#"{"a":1}"#);
    }
}

//! Conversations: `(conversation …)`, `(chat c text)`, `(messages c)`.
//!
//! A conversation is a persistent value — a map of plain data — so an old conversation
//! is never changed by a later `chat`: each exchange gives a new one. Its turns and
//! context are counted on the value itself, against its own limits.

use super::metrics::estimate_tokens;
use super::result::{is_task_result, task_result, with_entry};
use super::session::send;
use crate::builtins::fixed_args;
use crate::builtins::{builtin_table, split_options, str_arg, type_error};
use crate::error::{Error, Result};
use crate::eval::env::Env;
use crate::eval::Interp;
use crate::provider::message::system_text;
use crate::provider::options::{self, ModelOptions};
use crate::provider::{Message, Request, Role};
use crate::value::{from_json, to_json, Entries, Value};
use serde_json::{json, Value as Json};
use std::rc::Rc;

builtin_table! {
    /// `(conversation :system s :model m :max-turns n :max-context tokens :warning-threshold x :messages ms :temperature t …)`: a new conversation (model options as for tasks). `(conversation :system "You are terse.")`
    "conversation", 0, Some(30) => conversation;
    /// `(chat c text)`: sends the conversation and the user message `text`; a TaskResult whose `conversation` holds `c` extended by both messages. `(chat c "Hello")`
    "chat", 2, Some(2) => chat;
    /// `(messages c)`: the conversation's messages, system first (also of `chat`'s result). `(messages (conversation :system "Hi"))` ⇒ `({"role" "system" "content" "Hi"})`
    "messages", 1, Some(1) => messages;
}

/// The share of `:max-context` past which `notes.contextWarning` is true, by default.
pub const DEFAULT_WARNING_THRESHOLD: f64 = 0.8;

const KIND: &str = "conversation";

/// A conversation read out of its value.
#[derive(Clone, Debug, PartialEq)]
pub struct Conversation {
    pub model: Option<String>,
    pub options: ModelOptions,
    pub max_turns: Option<u64>,
    pub max_context: Option<u64>,
    pub warning_threshold: f64,
    /// Exchanges so far.
    pub turns: u64,
    /// Tokens of the latest exchange: the whole conversation and its answer.
    pub context_used: u64,
    pub messages: Vec<Message>,
}

impl Conversation {
    fn new() -> Conversation {
        Conversation {
            model: None,
            options: ModelOptions::default(),
            max_turns: None,
            max_context: None,
            warning_threshold: DEFAULT_WARNING_THRESHOLD,
            turns: 0,
            context_used: 0,
            messages: Vec::new(),
        }
    }

    pub fn to_value(&self) -> Value {
        let messages: Vec<Json> = self.messages.iter().map(Message::to_json).collect();
        from_json(&json!({
            "type": KIND,
            "model": self.model,
            "options": self.options.to_json(),
            "maxTurns": self.max_turns,
            "maxContext": self.max_context,
            "warningThreshold": self.warning_threshold,
            "turns": self.turns,
            "contextUsed": self.context_used,
            "messages": messages,
        }))
    }

    /// Reads a conversation value (or the result of `chat`, which holds one).
    pub fn from_value(who: &str, value: &Value) -> Result<Conversation> {
        let value = match value {
            v if is_task_result(v) => v
                .as_map()
                .and_then(|m| m.get(KIND))
                .cloned()
                .unwrap_or(Value::Nil),
            v => v.clone(),
        };
        let json = to_json(&value)?;
        if json.get("type").and_then(Json::as_str) != Some(KIND) {
            return Err(type_error(who, "a conversation", &value));
        }
        let bad = |what: &str| Error::eval(format!("{who}: a conversation's {what}"));
        let count = |key: &str| -> Result<Option<u64>> {
            match json.get(key) {
                None | Some(Json::Null) => Ok(None),
                Some(n) => n
                    .as_u64()
                    .map(Some)
                    .ok_or_else(|| bad(&format!("\"{key}\" is a count"))),
            }
        };
        let options = match json.get("options") {
            Some(Json::Object(map)) => ModelOptions::from_map(map).map_err(|e| bad(&e))?,
            None | Some(Json::Null) => ModelOptions::default(),
            Some(_) => return Err(bad("\"options\" is a map")),
        };
        let messages = match json.get("messages") {
            Some(Json::Array(items)) => items
                .iter()
                .map(Message::from_json)
                .collect::<std::result::Result<Vec<_>, _>>()
                .map_err(|e| bad(&format!("messages: {e}")))?,
            _ => return Err(bad("\"messages\" is a list")),
        };
        Ok(Conversation {
            model: json.get("model").and_then(Json::as_str).map(str::to_owned),
            options,
            max_turns: count("maxTurns")?,
            max_context: count("maxContext")?,
            warning_threshold: json
                .get("warningThreshold")
                .and_then(Json::as_f64)
                .unwrap_or(DEFAULT_WARNING_THRESHOLD),
            turns: count("turns")?.unwrap_or(0),
            context_used: count("contextUsed")?.unwrap_or(0),
            messages,
        })
    }

    /// Refuses an exchange past the conversation's turn or context limit.
    fn check_limits(&self, input_tokens: u64) -> Result<()> {
        if let Some(limit) = self.max_turns.filter(|limit| self.turns >= *limit) {
            return Err(Error::resource(
                "turns",
                self.turns + 1,
                limit,
                format!(
                    "the conversation allows {} (:max-turns)",
                    crate::value::counted(limit, "turn")
                ),
            ));
        }
        if let Some(limit) = self.max_context.filter(|limit| input_tokens > *limit) {
            return Err(Error::resource(
                "context",
                input_tokens,
                limit,
                format!(
                    "the conversation needs about {input_tokens} tokens, over its :max-context of {limit}"
                ),
            ));
        }
        Ok(())
    }
}

/// Tokens the messages take, as estimated when the provider does not say.
fn estimate(messages: &[Message]) -> u64 {
    messages.iter().map(|m| estimate_tokens(&m.content)).sum()
}

fn conversation(_: &Interp, args: &[Value], _: &Env) -> Result<Value> {
    const NAMES: [&str; 6] = [
        "system",
        "model",
        "max-turns",
        "max-context",
        "warning-threshold",
        "messages",
    ];
    let known: Vec<&str> = NAMES.iter().chain(&options::SPELLINGS).copied().collect();
    let (rest, given) = split_options("conversation", args, &known)?;
    if let Some(extra) = rest.first() {
        return Err(type_error("conversation", "options such as :system", extra));
    }
    let mut conversation = Conversation::new();
    let mut system = None;
    for (name, value) in given.iter().rev() {
        let invalid = |expected: &str| type_error("conversation", expected, value);
        let positive = || match value {
            Value::Int(n) if *n > 0 => Ok(u64::try_from(*n).ok()),
            _ => Err(invalid(&format!(":{name} as a positive integer"))),
        };
        match *name {
            "system" => system = Some(str_arg("conversation", value)?.to_owned()),
            "model" => conversation.model = Some(str_arg("conversation", value)?.to_owned()),
            "max-turns" => conversation.max_turns = positive()?,
            "max-context" => conversation.max_context = positive()?,
            "warning-threshold" => {
                conversation.warning_threshold = match value {
                    Value::Int(n) if (0..=1).contains(n) => *n as f64,
                    Value::Float(x) if (0.0..=1.0).contains(x) => *x,
                    _ => return Err(invalid(":warning-threshold from 0 to 1")),
                }
            }
            "messages" => {
                let items = to_json(value)?;
                let items = items
                    .as_array()
                    .ok_or_else(|| invalid(":messages as a list"))?;
                conversation.messages = items
                    .iter()
                    .map(Message::from_json)
                    .collect::<std::result::Result<_, _>>()
                    .map_err(|e| Error::eval(format!("conversation: {e}")))?;
            }
            option => conversation
                .options
                .set(option, to_json(value)?)
                .map_err(|e| Error::eval(format!("conversation: {e}")))?,
        }
    }
    if let Some(system) = system {
        conversation.messages.retain(|m| m.role != Role::System);
        conversation.messages.insert(0, Message::system(system));
    }
    Ok(conversation.to_value())
}

fn chat(interp: &Interp, args: &[Value], env: &Env) -> Result<Value> {
    let [conversation, said] = fixed_args("chat", args)?;
    let conversation = Conversation::from_value("chat", conversation)?;
    exchange(interp, conversation, str_arg("chat", said)?, env)
}

/// A conversation with nothing said yet (the REPL's `:chat MODEL`).
pub fn start(model: Option<String>) -> Value {
    Conversation {
        model,
        ..Conversation::new()
    }
    .to_value()
}

/// One exchange: `text` as the user's message, the answer as a TaskResult holding the
/// extended conversation under `conversation`.
pub fn exchange(
    interp: &Interp,
    mut conversation: Conversation,
    text: &str,
    env: &Env,
) -> Result<Value> {
    let mut sent = conversation.messages.clone();
    sent.push(Message::user(text));
    let input_tokens = estimate(&sent);
    conversation.check_limits(input_tokens)?;
    let request = Request {
        task: "chat".into(),
        system: system_text(&conversation.messages),
        prompt: text.to_owned(),
        model: conversation.model.clone(),
        round: 1,
        options: conversation.options.clone(),
        messages: sent.clone(),
        prompt_cache: Some("chat".into()),
        ..Request::default()
    };
    let answered = send(interp, &request, env, None, false)?;
    // A chat answer is text, with nothing to check.
    interp
        .tasks
        .observer
        .passed(&interp.state.task.observe, answered.candidate);
    let response = answered.response;
    conversation.turns += 1;
    conversation.context_used = match response.usage {
        Some(usage) => usage.input_tokens.saturating_add(usage.output_tokens),
        None => input_tokens + estimate_tokens(&response.content),
    };
    sent.push(Message::assistant(response.content.clone()));
    conversation.messages = sent;
    let mut notes = Entries::new();
    super::atomic::call_notes(&answered.notes, &response, &mut notes);
    let limit = conversation
        .max_context
        .unwrap_or_else(|| interp.metrics().context_limit);
    let warning = conversation.context_used as f64 > conversation.warning_threshold * limit as f64;
    notes.insert(Rc::from("contextWarning"), Value::Bool(warning));
    let result = task_result("chat", response.content, Value::Nil, notes);
    Ok(with_entry(&result, KIND, conversation.to_value()))
}

fn messages(_: &Interp, args: &[Value], _: &Env) -> Result<Value> {
    let [conversation] = fixed_args("messages", args)?;
    let conversation = Conversation::from_value("messages", conversation)?;
    Ok(Value::list(
        conversation
            .messages
            .iter()
            .map(|m| from_json(&m.to_json()))
            .collect(),
    ))
}

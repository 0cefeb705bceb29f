//! Atomic tasks: render the templates, ask the provider, parse the answer.

use super::answer::{check_choice, cut_off, parse_output, Answer};
use super::builtins::string_list;
use super::definition::{lossy_json, Memory, PromptParts, Task};
use super::memory::{context_text, files_text, Query, Strategy};
use super::observe::CallNotes;
use super::result::{success_score, task_result, with_entry};
use super::session::send;
use crate::error::Result;
use crate::eval::env::{Env, Frame, Scope, Slots};
use crate::eval::Interp;
use crate::provider::message::single_turn;
use crate::provider::{Message, Request, Response, Usage};
use crate::symbol::Sym;
use crate::value::{from_json, Entries, Value};
use std::rc::Rc;

/// The subtype of a task that judges: its answer's `successScore` (or `score`) becomes
/// `notes.successScore`.
pub const EVALUATOR: &str = "evaluator";

/// A round of an atomic task: its number (1-based), the previous round's problems, and
/// the conversation so far — empty in round 1, when the call fills in what it sends.
pub struct Round<'a> {
    pub number: u32,
    pub issues: &'a [Value],
    pub conversation: &'a mut Vec<Message>,
}

/// One round of an atomic task: the templates are rendered in the call's `frame`. A
/// further round sends the conversation so far instead of the rendered messages.
pub fn run(
    interp: &Interp,
    task: &Task,
    parts: &PromptParts,
    frame: &Env,
    round: Round,
) -> Result<Value> {
    let mut request = render(interp, task, parts, frame, &round)?;
    let deadline = parts
        .timeout
        .and_then(|t| std::time::Instant::now().checked_add(t));
    let (sent, tool_calls) = if task.tools.is_empty() {
        (send(interp, &request, frame, deadline, task.cache)?, None)
    } else {
        let (sent, calls) = super::tools::converse(interp, task, &mut request, frame, deadline)?;
        (sent, Some(calls))
    };
    // What this round sent, for a further round to continue from.
    *round.conversation = request.messages;
    let response = sent.response;
    let mut notes = Entries::new();
    if let Some(calls) = tool_calls {
        notes.insert(Rc::from("toolCalls"), calls);
    }
    call_notes(&sent.notes, &response, &mut notes);
    let provider = match &response.fallback {
        Some((answered, _)) => answered.clone(),
        None => interp.current_session().borrow().provider.name(),
    };
    let answer = Answer {
        content: &response.content,
        provider: Some(&provider),
        model: sent.model.as_deref(),
        round: round.number,
    };
    if response.truncated() && task.json_output {
        return Err(cut_off(task, &answer, &response.finish_reason));
    }
    let chosen = check_choice(task, &answer)?;
    let parsed = parse_output(task, &answer, &mut notes)?;
    if task.subtype() == Some(EVALUATOR) {
        if let Some(score) = success_score(&parsed, &Value::Nil)? {
            notes.insert(Rc::from("successScore"), Value::Float(score));
        }
    }
    if !notes.contains_key("parseError") {
        interp
            .tasks
            .observer
            .passed(&interp.state.task.observe, sent.candidate);
    }
    let content = chosen.unwrap_or(response.content);
    let result = task_result(&task.name, content, parsed, notes);
    Ok(with_provider_fields(
        result,
        response.status,
        response.criteria,
    ))
}

/// A provider's own status and criteria, kept in the result.
fn with_provider_fields(
    mut result: Value,
    status: Option<String>,
    criteria: Option<serde_json::Value>,
) -> Value {
    if let Some(status) = status {
        result = with_entry(&result, "status", Value::from(status));
    }
    if let Some(criteria) = criteria {
        result = with_entry(&result, "criteria", from_json(&criteria));
    }
    result
}

/// The request of a round: the templates rendered in the call's `frame` (with the
/// memory's `files` and `context`), or the conversation so far in a further round.
fn render(
    interp: &Interp,
    task: &Task,
    parts: &PromptParts,
    frame: &Env,
    round: &Round,
) -> Result<Request> {
    let templates_env = memory_frame(interp, &parts.memory, frame)?;
    let system = parts
        .system
        .as_ref()
        .map(|t| t.render(interp, &templates_env))
        .transpose()?;
    let system = join_system(interp.base_system(), system);
    let prompt = parts.prompt.render(interp, &templates_env)?;
    let messages = match round.conversation.is_empty() {
        true => first_messages(interp, parts, frame, system.as_deref(), &prompt)?,
        false => round.conversation.clone(),
    };
    Ok(Request {
        task: task.name.clone(),
        messages,
        system,
        prompt,
        model: task.model.clone(),
        params: arguments(task, frame),
        round: round.number,
        issues: round.issues.iter().map(lossy_json).collect(),
        json_mode: task.json_output,
        options: task.options.clone(),
        tools: Vec::new(),
        schema: task.schema.as_ref().map(|s| lossy_json(&s.as_value())),
        // The tool loop sets the tool choice, in the tools' wire names.
        tool_choice: None,
        choice: task.constraints.choice.clone(),
        grammar: task.constraints.grammar.clone(),
        grammar_optional: false,
        prompt_cache: parts.prompt_cache.clone(),
    })
}

/// `notes.usage`: `{"input_tokens" n "output_tokens" n}`, with `cached_input_tokens`
/// and `cache_write_tokens` when the provider's prompt cache served or kept any.
fn usage_value(usage: Usage) -> Value {
    let mut counts = Entries::new();
    let tokens = |n: u64| Value::Int(i64::try_from(n).unwrap_or(i64::MAX));
    counts.insert(Rc::from("input_tokens"), tokens(usage.input_tokens));
    counts.insert(Rc::from("output_tokens"), tokens(usage.output_tokens));
    for (key, n) in [
        ("cached_input_tokens", usage.cached_input_tokens),
        ("cache_write_tokens", usage.cache_write_tokens),
    ] {
        if n > 0 {
            counts.insert(Rc::from(key), tokens(n));
        }
    }
    Value::map(counts)
}

/// The notes every model call gives: `usage`, `cost`, `cached`, `finishReason`,
/// `reasoning` (the model's, when the provider returns it apart) and `truncated` (absent keys read as nil: results of unpriced, uncached calls stay as
/// they were), and the fallback's.
pub fn call_notes(call: &CallNotes, response: &Response, notes: &mut Entries) {
    if let Some(usage) = response.usage {
        notes.insert(Rc::from("usage"), usage_value(usage));
    }
    if let Some(cost) = call.cost {
        notes.insert(Rc::from("cost"), Value::Float(cost));
    }
    if call.cached {
        notes.insert(Rc::from("cached"), Value::Bool(true));
    }
    if let Some(reason) = &response.finish_reason {
        notes.insert(Rc::from("finishReason"), Value::from(reason.as_str()));
    }
    if let Some(reasoning) = &response.reasoning {
        notes.insert(Rc::from("reasoning"), Value::from(reasoning.as_str()));
    }
    if response.truncated() {
        notes.insert(Rc::from("truncated"), Value::Bool(true));
    }
    fallback_notes(response, notes);
}

/// Under a fallback chain, `notes.provider` (which one answered) and `notes.fallbacks`
/// (those that failed first, `{"provider" … "error" …}`).
fn fallback_notes(response: &Response, notes: &mut Entries) {
    if let Some((provider, failed)) = &response.fallback {
        notes.insert(Rc::from("provider"), Value::from(provider.as_str()));
        let failed = failed.iter().map(crate::value::from_json).collect();
        notes.insert(Rc::from("fallbacks"), Value::list(failed));
    }
}

/// The messages of a first round: the system message when there is one, then the
/// prompt with the task's `:attachments` (evaluated in the call's `frame`, files read).
fn first_messages(
    interp: &Interp,
    parts: &PromptParts,
    frame: &Env,
    system: Option<&str>,
    prompt: &str,
) -> Result<Vec<Message>> {
    let mut messages = single_turn(system, prompt);
    if let (Some(code), Some(user)) = (&parts.attachments, messages.last_mut()) {
        user.attachments = super::attachments::read(interp, &interp.eval(code, frame)?)?;
    }
    Ok(messages)
}

/// The provider's base system prompt, then the task's, a blank line apart.
fn join_system(base: Option<String>, task: Option<String>) -> Option<String> {
    match (base, task) {
        (Some(base), Some(task)) => Some(format!("{base}\n\n{task}")),
        (base, task) => base.or(task),
    }
}

/// The call frame, or when the task reads files or asks for context, a frame binding
/// `files` and `context` over it.
fn memory_frame(interp: &Interp, memory: &Memory, frame: &Env) -> Result<Env> {
    if memory.files.is_none() && memory.query.is_none() {
        return Ok(frame.clone());
    }
    let mut names = Vec::new();
    let mut values = Slots::new();
    if let Some(files) = &memory.files {
        let paths = string_list(":files", &interp.eval(files, frame)?)?;
        names.push(Sym::new("files"));
        values.push(Value::str(files_text(&paths, &interp.limits.capabilities)?));
    }
    if let Some(query) = &memory.query {
        let text = query.render(interp, frame)?;
        let matches = interp.tasks.get_context(
            &Query {
                text: &text,
                dir: memory.dir.as_deref(),
                files: None,
                limit: 5,
                strategy: Strategy::Content,
            },
            &interp.limits.capabilities,
        )?;
        names.push(Sym::new("context"));
        values.push(Value::str(context_text(&matches)));
    }
    Ok(Some(Frame::new(Scope::new(names), values, frame.clone())))
}

/// The parameters' values in the call frame, as JSON by name.
fn arguments(task: &Task, frame: &Env) -> serde_json::Map<String, serde_json::Value> {
    let Some(frame) = frame else {
        return serde_json::Map::new();
    };
    let slots = frame.values();
    task.params
        .iter()
        .zip(slots.iter())
        .map(|(param, value)| (param.name.name().to_owned(), lossy_json(value)))
        .collect()
}

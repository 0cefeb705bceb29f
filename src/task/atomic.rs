//! Atomic tasks: render the templates, ask the provider, parse the answer.

use super::answer::{cut_off, parse_output, Answer};
use super::builtins::string_list;
use super::definition::{lossy_json, Memory, PromptParts, Task};
use super::memory::{context_text, files_text, Query, Strategy};
use super::observe::CallNotes;
use super::result::{task_result, with_entry};
use super::session::send;
use crate::env::{Env, Frame, Scope, Slots};
use crate::error::Result;
use crate::eval::Interp;
use crate::provider::message::single_turn;
use crate::provider::{Message, Request, Response, Usage};
use crate::symbol::Sym;
use crate::value::{from_json, Entries, Value};
use std::rc::Rc;

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
    let templates_env = memory_frame(interp, &parts.memory, frame)?;
    let system = parts
        .system
        .as_ref()
        .map(|t| t.render(interp, &templates_env))
        .transpose()?;
    let system = join_system(interp.base_system(), system);
    let prompt = parts.prompt.render(interp, &templates_env)?;
    let messages = match round.conversation.is_empty() {
        true => single_turn(system.as_deref(), &prompt),
        false => round.conversation.clone(),
    };
    let mut request = Request {
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
    };
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
    let parsed = parse_output(task, &answer, &mut notes)?;
    if !notes.contains_key("parseError") {
        interp
            .tasks
            .observer
            .passed(&interp.state.task.observe, sent.candidate);
    }
    let mut result = task_result(&task.name, response.content, parsed, notes);
    // A provider's own status and criteria are kept.
    if let Some(status) = response.status {
        result = with_entry(&result, "status", Value::from(status));
    }
    if let Some(criteria) = response.criteria {
        result = with_entry(&result, "criteria", from_json(&criteria));
    }
    Ok(result)
}

/// `notes.usage`: `{"input_tokens" n "output_tokens" n}`.
fn usage_value(usage: Usage) -> Value {
    let mut counts = Entries::new();
    let tokens = |n: u64| Value::Int(i64::try_from(n).unwrap_or(i64::MAX));
    counts.insert(Rc::from("input_tokens"), tokens(usage.input_tokens));
    counts.insert(Rc::from("output_tokens"), tokens(usage.output_tokens));
    Value::map(counts)
}

/// The notes every model call gives: `usage`, `cost`, `cached`, `finishReason` and
/// `truncated` (absent keys read as nil: results of unpriced, uncached calls stay as
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
    let slots = frame.slots.borrow();
    task.params
        .iter()
        .zip(slots.iter())
        .map(|(param, value)| (param.name.name().to_owned(), lossy_json(value)))
        .collect()
}

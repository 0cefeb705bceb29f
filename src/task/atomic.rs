//! Atomic tasks: render the templates, ask the provider, parse the answer.

use super::answer::{parse_output, Answer};
use super::builtins::string_list;
use super::definition::{lossy_json, Memory, PromptParts, Task};
use super::memory::{context_text, files_text, Query, Strategy};
use super::result::{task_result, with_entry};
use super::session::send;
use crate::env::{Env, Frame, Scope, Slots};
use crate::error::Result;
use crate::eval::Interp;
use crate::provider::Request;
use crate::symbol::Sym;
use crate::value::{from_json, Entries, Value};
use std::rc::Rc;

/// One round of an atomic task: the templates are rendered in the call's `frame`;
/// `issues` are the previous round's audit issues.
pub fn run(
    interp: &Interp,
    task: &Task,
    parts: &PromptParts,
    frame: &Env,
    round: u32,
    issues: &[Value],
) -> Result<Value> {
    let templates_env = memory_frame(interp, &parts.memory, frame)?;
    let request = Request {
        task: task.name.clone(),
        system: parts
            .system
            .as_ref()
            .map(|t| t.render(interp, &templates_env))
            .transpose()?,
        prompt: parts.prompt.render(interp, &templates_env)?,
        model: task.model.clone(),
        params: arguments(task, frame),
        round,
        issues: issues.iter().map(lossy_json).collect(),
        json_mode: task.json_output,
        schema: task.schema.as_ref().map(|s| lossy_json(&s.as_value())),
    };
    let deadline = parts
        .timeout
        .and_then(|t| std::time::Instant::now().checked_add(t));
    let sent = send(interp, &request, frame, deadline, task.cache)?;
    let response = sent.response;
    let mut notes = Entries::new();
    if let Some(usage) = response.usage {
        let mut counts = Entries::new();
        let tokens = |n: u64| Value::Int(i64::try_from(n).unwrap_or(i64::MAX));
        counts.insert(Rc::from("input_tokens"), tokens(usage.input_tokens));
        counts.insert(Rc::from("output_tokens"), tokens(usage.output_tokens));
        notes.insert(Rc::from("usage"), Value::map(counts));
    }
    // Absent keys read as nil: results of unpriced, uncached calls stay as they were.
    if let Some(cost) = sent.notes.cost {
        notes.insert(Rc::from("cost"), Value::Float(cost));
    }
    if sent.notes.cached {
        notes.insert(Rc::from("cached"), Value::Bool(true));
    }
    let provider = interp.current_session().borrow().provider.name();
    let answer = Answer {
        content: &response.content,
        provider: Some(&provider),
        model: request.model.as_deref(),
        round,
    };
    let parsed = parse_output(task, &answer, &mut notes)?;
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

//! Atomic tasks: render the templates, ask the provider, parse the answer.

use super::answer::{parse_output, Answer};
use super::definition::{lossy_json, Task};
use super::result::task_result;
use super::session::send;
use super::template::Template;
use crate::env::Env;
use crate::error::Result;
use crate::eval::Interp;
use crate::provider::message::single_turn;
use crate::provider::{Request, Response, Usage};
use crate::value::{Entries, Value};
use std::rc::Rc;

/// One round of an atomic task: the templates are rendered in the call's `frame`;
/// `issues` are the previous round's audit issues.
pub fn run(
    interp: &Interp,
    task: &Task,
    (system, prompt, timeout): (Option<&Template>, &Template, Option<std::time::Duration>),
    frame: &Env,
    round: u32,
    issues: &[Value],
) -> Result<Value> {
    let system = system.map(|t| t.render(interp, frame)).transpose()?;
    let system = join_system(interp.base_system(), system);
    let prompt = prompt.render(interp, frame)?;
    let request = Request {
        task: task.name.clone(),
        messages: single_turn(system.as_deref(), &prompt),
        system,
        prompt,
        model: task.model.clone(),
        params: arguments(task, frame),
        round,
        issues: issues.iter().map(lossy_json).collect(),
        json_mode: task.json_output,
        options: task.options.clone(),
        tools: Vec::new(),
    };
    let deadline = timeout.map(|t| std::time::Instant::now() + t);
    let model = request.model.clone();
    let (response, tool_calls) = if task.tools.is_empty() {
        (send(interp, &request, frame, deadline)?, None)
    } else {
        let (response, calls) = super::tools::converse(interp, task, request, frame, deadline)?;
        (response, Some(calls))
    };
    let mut notes = Entries::new();
    if let Some(calls) = tool_calls {
        notes.insert(Rc::from("toolCalls"), calls);
    }
    if let Some(usage) = response.usage {
        notes.insert(Rc::from("usage"), usage_value(usage));
    }
    fallback_notes(&response, &mut notes);
    let provider = match &response.fallback {
        Some((answered, _)) => answered.clone(),
        None => interp.current_session().borrow().provider.name(),
    };
    let answer = Answer {
        content: &response.content,
        provider: Some(&provider),
        model: model.as_deref(),
        round,
    };
    let parsed = parse_output(task, &answer, &mut notes)?;
    Ok(task_result(&task.name, response.content, parsed, notes))
}

/// `notes.usage`: `{"input_tokens" n "output_tokens" n}`.
pub fn usage_value(usage: Usage) -> Value {
    let mut counts = Entries::new();
    let tokens = |n: u64| Value::Int(i64::try_from(n).unwrap_or(i64::MAX));
    counts.insert(Rc::from("input_tokens"), tokens(usage.input_tokens));
    counts.insert(Rc::from("output_tokens"), tokens(usage.output_tokens));
    Value::map(counts)
}

/// Under a fallback chain, `notes.provider` (which one answered) and `notes.fallbacks`
/// (those that failed first, `{"provider" … "error" …}`).
pub fn fallback_notes(response: &Response, notes: &mut Entries) {
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

//! Calling a task (the seeds' FunctionCall): bind the arguments, make the call's
//! environment as `:inherit-context` says, run the rounds, return a TaskResult.

use super::answer::{parse_output, showing_answer, Answer};
use super::audit::{run_rounds, Checks};
use super::definition::{Action, InheritContext, Task};
use super::{atomic, command, lossy_json, memory, result, trace};
use crate::error::{Error, Reason, Result};
use crate::eval::env::{self, Env, Frame, Scope, Slots};
use crate::eval::Interp;
use crate::provider::Message;
use crate::value::{from_json, Entries, Value};
use std::rc::Rc;

/// Calls `task` with evaluated arguments; `env` is the environment of the call
/// expression (or of the builtin, such as `map`, that makes the call).
pub fn call(interp: &Interp, task: &Rc<Task>, args: &[Value], env: &Env) -> Result<Value> {
    call_checked(interp, task, args, env, &Checks::default())
}

/// A call with extra audits and retries (a `step`'s). A call sandboxed code makes is a
/// tool call of the code's author (a model): it waits for approval as the tool loop's do.
pub fn call_checked(
    interp: &Interp,
    task: &Rc<Task>,
    args: &[Value],
    env: &Env,
    extra: &Checks,
) -> Result<Value> {
    if interp.tasks.sandboxed() {
        super::human::approve_code_call(interp, task, args)?;
    }
    call_approved(interp, task, args, env, extra)
}

/// A call that needed no approval, or was given it (the tool loop's). A task defined in
/// another home than the caller's (a task given to `eval-sandboxed`) runs in its own:
/// its code's names mean what they meant where it was defined.
pub fn call_approved(
    interp: &Interp,
    task: &Rc<Task>,
    args: &[Value],
    env: &Env,
    extra: &Checks,
) -> Result<Value> {
    let home_guard = match task.home {
        Some(home) if home != interp.home() => Some(interp.enter_home(home)?),
        _ => None,
    };
    // A task called from another home sees none of that code's local bindings, whatever
    // its `:inherit-context`: a plan's `let` must not rebind the names of a task it was
    // given.
    let env = if home_guard.is_some() { &None } else { env };
    let _guard = interp.enter_call(task)?;
    let logged = interp
        .tasks
        .observer
        .begin_task(&interp.state.task.observe, &task.name);
    let result = run_call(interp, task, args, env, extra);
    interp
        .tasks
        .observer
        .end_task(&interp.state.task.observe, logged, &result);
    result
}

fn run_call(
    interp: &Interp,
    task: &Rc<Task>,
    args: &[Value],
    env: &Env,
    extra: &Checks,
) -> Result<Value> {
    let bound = bind_arguments(task, args)?;
    let outer = task.call_outer(context_env(task, env));
    let checks = Checks {
        audits: task.audits.iter().chain(&extra.audits).cloned().collect(),
        retries: task.retries.max(extra.retries),
    };
    run_rounds(interp, task, &checks, env, |round, issues, conversation| {
        let mut slots = bound.clone();
        if let Some(slot) = task.issues_slot {
            slots.resize(slot, Value::Nil);
            slots.push(Value::list(issues.to_vec()));
        }
        let frame = Frame::new(task.scope.clone(), slots, outer.clone());
        interp.with_frame(frame, |frame| {
            run_once(interp, task, frame, round, issues, conversation)
        })
    })
    .map_err(|error| trace::crossed(error, task))
}

fn run_once(
    interp: &Interp,
    task: &Task,
    frame: &Env,
    round: u32,
    issues: &[Value],
    conversation: &mut Vec<Message>,
) -> Result<Value> {
    let result = match &task.action {
        Action::Prompt(parts) => {
            let round = atomic::Round {
                number: round,
                issues,
                conversation,
            };
            atomic::run(interp, task, parts, frame, round)
        }
        Action::Command(parts) => command::run(interp, task, parts, frame),
        Action::Body(body, timeout) => {
            let value = interp.within_timeout(*timeout, || interp.eval(body, frame))?;
            check_body_output(task, result::from_body(&task.name, value), round)
        }
    }?;
    if task.subtype() == Some(memory::ASSOCIATIVE_MATCHING) {
        return memory::associative_result(&result);
    }
    Ok(result)
}

/// `:output "json"` or `:schema` on a body task: its result is parsed (text) or checked
/// (data) the way an atomic task's answer is.
fn check_body_output(task: &Task, result: Value, round: u32) -> Result<Value> {
    if !task.json_output {
        return Ok(result);
    }
    let content = result::field(&result, "content");
    let content = content.as_str().unwrap_or("");
    let answer = Answer {
        content,
        provider: None,
        model: None,
        round,
    };
    let mut notes = Entries::new();
    let parsed = match result::field(&result, "parsedContent") {
        Value::Nil | Value::Str(_) => parse_output(task, &answer, &mut notes)?,
        data => match &task.schema {
            None => return Ok(result),
            Some(schema) => {
                let mut json = lossy_json(&data);
                let repairs = schema
                    .conform(&mut json)
                    .map_err(|e| showing_answer(e, task, &answer))?;
                if !repairs.is_empty() {
                    let names = repairs.into_iter().map(Value::from).collect();
                    notes.insert(Rc::from("repairs"), Value::list(names));
                }
                from_json(&json)
            }
        },
    };
    let notes: Vec<(&str, Value)> = notes.iter().map(|(k, v)| (&**k, v.clone())).collect();
    Ok(result::with_entry(
        &result::with_notes(&result, &notes),
        "parsedContent",
        parsed,
    ))
}

fn invalid_input(task: &Task, message: String) -> Error {
    input_error(&task.name, message)
}

/// A call's arguments do not fit the task's parameters (also reported by `check`).
pub fn input_error(task: &str, message: String) -> Error {
    Error::task_failure(
        Reason::InputValidationFailure,
        format!("task `{task}`: {message}"),
    )
}

/// An unknown named argument, with the nearest parameter name as a hint.
pub fn unknown_named_argument<'a>(
    task: &str,
    name: &str,
    params: impl IntoIterator<Item = &'a str>,
) -> Error {
    input_error(task, format!("unknown named argument :{name}"))
        .with_hint(crate::suggest::hint(name, params))
}

/// Matches arguments to parameters: positional ones in order, `:name value` pairs by
/// name (a keyword always names a parameter), then defaults. A positional argument
/// fills the first parameter not already named.
pub fn bind_arguments(task: &Task, args: &[Value]) -> Result<Slots> {
    let mut values: Vec<Option<Value>> = vec![None; task.params.len()];
    let mut position = 0;
    let mut positional = 0;
    let mut rest = args.iter();
    while let Some(arg) = rest.next() {
        match arg.keyword_name() {
            Some(name) => {
                let index = task
                    .params
                    .iter()
                    .position(|p| arg.is_keyword_sym(p.name))
                    .ok_or_else(|| {
                        let params = task.params.iter().map(|p| p.name.name());
                        unknown_named_argument(&task.name, name, params)
                    })?;
                let value = rest.next().ok_or_else(|| {
                    invalid_input(task, format!("named argument :{name} has no value"))
                })?;
                let slot = values
                    .get_mut(index)
                    .ok_or_else(|| invalid_input(task, "bad parameter".into()))?;
                if slot.is_some() {
                    return Err(invalid_input(
                        task,
                        format!("argument `{name}` is given twice"),
                    ));
                }
                *slot = Some(value.clone());
            }
            None => {
                positional += 1;
                while values.get(position).is_some_and(Option::is_some) {
                    position += 1;
                }
                let slot = values.get_mut(position).ok_or_else(|| {
                    invalid_input(
                        task,
                        format!(
                            "too many arguments: it takes {} and argument {positional} is extra: {}",
                            task.params.len(),
                            crate::value::write_prefix(arg, 40)
                        ),
                    )
                })?;
                *slot = Some(arg.clone());
                position += 1;
            }
        }
    }
    task.params
        .iter()
        .zip(values)
        .map(|(param, value)| {
            value.or_else(|| param.default.clone()).ok_or_else(|| {
                invalid_input(task, format!("missing required argument `{}`", param.name))
            })
        })
        .collect()
}

/// The environment the call frame's names are looked up in after its own.
fn context_env(task: &Task, caller: &Env) -> Env {
    match &task.context {
        InheritContext::Full => caller.clone(),
        InheritContext::None | InheritContext::Fresh => None,
        InheritContext::Subset(keys) => {
            let values: Slots = keys
                .iter()
                .map(|key| env::lookup_by_name(caller, *key).unwrap_or(Value::Undefined))
                .collect();
            Some(Frame::new(Scope::new(keys.clone()), values, None))
        }
    }
}

//! `(director-evaluator-loop :director d :evaluator e :max-iterations n :input x)`: the
//! director proposes, the evaluator judges with an EvaluationResult, and the director
//! tries again with the feedback until the evaluator is satisfied or the iterations run
//! out.

use super::definition::Task;
use super::result::{field, from_body, is_task_result, success_score, with_notes};
use crate::builtins::{proc_arg, split_options, type_error};
use crate::error::{Error, Reason, Result};
use crate::eval::env::Env;
use crate::eval::Interp;
use crate::value::{from_json, Entries, Value};
use std::rc::Rc;

pub const CONTINUATION: &str = "CONTINUATION";
const DEFAULT_ITERATIONS: usize = 3;

/// The builtin: runs the loop.
pub fn director_evaluator_loop(interp: &Interp, args: &[Value], env: &Env) -> Result<Value> {
    let who = "director-evaluator-loop";
    let (rest, options) = split_options(
        who,
        args,
        &["director", "evaluator", "max-iterations", "input"],
    )?;
    if let Some(extra) = rest.first() {
        return Err(type_error(
            who,
            "options :director :evaluator :max-iterations :input",
            extra,
        ));
    }
    let option = |name: &str| options.iter().find(|(o, _)| *o == name).map(|(_, v)| v);
    let missing = |name: &str| Error::eval(format!("{who}: :{name} is required"));
    let director = proc_arg(who, option("director").ok_or_else(|| missing("director"))?)?;
    let evaluator = proc_arg(
        who,
        option("evaluator").ok_or_else(|| missing("evaluator"))?,
    )?;
    let iterations = match option("max-iterations") {
        None => DEFAULT_ITERATIONS,
        Some(value) => match crate::builtins::index_arg(who, value)? {
            0 => return Err(type_error(who, "a :max-iterations of at least 1", value)),
            n => n,
        },
    };
    let input = option("input").cloned().unwrap_or(Value::Nil);
    give_subtype(director, "director");
    give_subtype(evaluator, super::atomic::EVALUATOR);

    let mut feedback = Value::Nil;
    let mut previous = Value::Nil;
    let mut evaluations = Vec::new();
    let mut last = Value::Nil;
    for iteration in 1..=iterations {
        let number = Value::Int(i64::try_from(iteration).unwrap_or(i64::MAX));
        let state = director_input(&input, feedback, previous, &number);
        let result = as_result("director", call_director(interp, director, state, env)?);
        let evaluation = as_result(
            "evaluator",
            call_with_iteration(interp, evaluator, result.clone(), &number, env)?,
        );
        let (success, said, notes) = judgement(&evaluation, iteration)?;
        let score = field(&notes, "successScore");
        evaluations.push(notes);
        let count = Value::Int(i64::try_from(iteration).unwrap_or(i64::MAX));
        let mut loop_notes = vec![
            ("iterations", count),
            ("evaluations", Value::list(evaluations.clone())),
        ];
        if !matches!(score, Value::Nil) {
            loop_notes.push(("successScore", score));
        }
        if success {
            return Ok(with_notes(&result, &loop_notes));
        }
        feedback = said;
        previous = field(&result, "content");
        last = with_notes(&result, &loop_notes);
    }
    Ok(with_status(&last, CONTINUATION))
}

/// A task with no subtype of its own takes the role it plays here.
fn give_subtype(callee: &Value, role: &str) {
    if let Value::Task(task) = callee {
        task.set_subtype_if_none(role);
    }
}

/// The director's input, the same shape on every iteration.
const DIRECTOR_FIELDS: [&str; 4] = ["input", "feedback", "previous", "iteration"];

/// `{"input" x "feedback" f "previous" p "iteration" n}`: `feedback` and `previous` (the
/// director's last content) are nil on the first iteration.
fn director_input(input: &Value, feedback: Value, previous: Value, iteration: &Value) -> Value {
    let values = [input.clone(), feedback, previous, iteration.clone()];
    let entries: Entries = DIRECTOR_FIELDS
        .iter()
        .zip(values)
        .map(|(name, value)| (Rc::from(*name), value))
        .collect();
    Value::map(entries)
}

/// A task whose parameters name fields of the director's input gets those fields by
/// name (so its templates reach `{{feedback}}`); any other director is called as
/// `(d state iteration)`, a task of one parameter with the state alone.
fn call_director(interp: &Interp, director: &Value, state: Value, env: &Env) -> Result<Value> {
    let Value::Task(task) = director else {
        let iteration = field(&state, "iteration");
        return call_with_iteration(interp, director, state, &iteration, env);
    };
    let named: Vec<Value> = task
        .params
        .iter()
        .filter(|param| DIRECTOR_FIELDS.contains(&param.name.name()))
        .flat_map(|param| [Value::Keyword(param.name), field(&state, param.name.name())])
        .collect();
    if named.is_empty() {
        let iteration = field(&state, "iteration");
        return call_with_iteration(interp, director, state, &iteration, env);
    }
    interp.apply(director, &named, env)
}

/// `(f input iteration)`; a task of one parameter is called with the input alone.
fn call_with_iteration(
    interp: &Interp,
    f: &Value,
    input: Value,
    iteration: &Value,
    env: &Env,
) -> Result<Value> {
    match f {
        Value::Task(task) if takes_one(task) => interp.apply(f, &[input], env),
        _ => interp.apply(f, &[input, iteration.clone()], env),
    }
}

fn takes_one(task: &Task) -> bool {
    task.params.len() == 1
}

fn as_result(role: &str, value: Value) -> Value {
    if is_task_result(&value) {
        value
    } else {
        from_body(role, value)
    }
}

/// Success and feedback from the evaluator's `parsedContent` (or its content read as
/// JSON), else from its notes; and the EvaluationResult notes recorded for it.
fn judgement(evaluation: &Value, iteration: usize) -> Result<(bool, Value, Value)> {
    let parsed = match field(evaluation, "parsedContent") {
        Value::Nil => match field(evaluation, "content") {
            Value::Str(text) => serde_json::from_str::<serde_json::Value>(&text)
                .map(|json| from_json(&json))
                .unwrap_or(Value::Nil),
            _ => Value::Nil,
        },
        parsed => parsed,
    };
    let notes = field(evaluation, "notes");
    let pick = |key: &str| match field(&parsed, key) {
        Value::Nil => field(&notes, key),
        found => found,
    };
    let success = match pick("success") {
        Value::Bool(b) => b,
        _ => {
            return Err(Error::task_failure(
                Reason::OutputFormatFailure,
                "director-evaluator-loop: the evaluator's answer is not an EvaluationResult (it needs \"success\" true or false, in its JSON output or its notes)",
            ))
        }
    };
    let feedback = match pick("feedback") {
        Value::Nil => Value::str(String::new()),
        other => other,
    };
    let mut recorded: Entries = notes
        .as_map()
        .map(|m| m.entries.clone())
        .unwrap_or_default();
    if let Some(map) = parsed.as_map() {
        for (key, value) in &map.entries {
            recorded.insert(key.clone(), value.clone());
        }
    }
    if let Some(score) = success_score(&parsed, &notes)? {
        recorded.insert(Rc::from("successScore"), Value::Float(score));
    }
    recorded.insert(Rc::from("success"), Value::Bool(success));
    recorded.insert(Rc::from("feedback"), feedback.clone());
    recorded.insert(
        Rc::from("iteration"),
        Value::Int(i64::try_from(iteration).unwrap_or(i64::MAX)),
    );
    Ok((success, feedback, Value::map(recorded)))
}

fn with_status(result: &Value, status: &str) -> Value {
    let Value::Map(map) = result else {
        return result.clone();
    };
    let mut entries = map.entries.clone();
    entries.insert(Rc::from("status"), Value::from(status));
    Value::Map(Rc::new(crate::value::Map {
        entries,
        task_result: map.task_result,
    }))
}

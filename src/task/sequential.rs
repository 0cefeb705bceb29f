//! `(sequential step…)` and `(step task arg… :inputs-from […] :input builder)`.
//!
//! The steps run in a child environment where `step_results` is the list of the results
//! so far; it lives only as long as the sequence. An error in step `i` becomes
//! `TASK_FAILURE` / `subtask_failure` with the step, the earlier results and the error.

use super::audit::{audit_list, Checks};
use super::call::call_checked;
use super::definition::lossy_json;
use super::result::field;
use crate::builtins::type_error;
use crate::error::{Error, ErrorKind, Reason, Result};
use crate::eval::ast::Extension;
use crate::eval::env::{Env, Frame, Scope};
use crate::eval::reader::{Syntax, SyntaxKind};
use crate::eval::{Compiler, Interp, Node};
use crate::source::Span;
use crate::symbol::{well_known, Sym};
use crate::value::{write_string, Value};
use serde_json::json;
use std::rc::Rc;

struct Sequential {
    scope: Rc<Scope>,
    /// `:accumulate`: what of the earlier steps `accumulated` (slot 1) holds.
    accumulate: Option<Accumulate>,
    /// `:include-outputs-from [index or task name…]`: only those earlier steps accumulate.
    include: Option<Node>,
    steps: Vec<(Node, Span)>,
}

/// What each step sees of the earlier ones as `{{accumulated}}`.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Accumulate {
    /// Their `content`.
    FullOutput,
    /// Their `notes`, as JSON.
    NotesOnly,
}

const ACCUMULATION_FORMATS: &str = "\"full_output\" or \"notes_only\"";

pub fn sequential(compiler: &mut Compiler, items: &[Syntax], _span: Span) -> Result<Node> {
    let mut steps = items.get(1..).unwrap_or_default();
    let mut accumulate = None;
    let mut include = None;
    while let [Syntax {
        kind: SyntaxKind::Keyword(keyword),
        span,
    }, rest @ ..] = steps
    {
        let value = rest.first().ok_or_else(|| {
            Error::syntax(format!("sequential option :{keyword} needs a value"), *span)
        })?;
        match keyword.name() {
            "accumulate" => accumulate = Some(accumulation(value)?),
            "include-outputs-from" => include = Some(compiler.compile(value)?),
            _ => {
                return Err(Error::syntax(
                    format!("unknown sequential option :{keyword} (known: :accumulate, :include-outputs-from)"),
                    *span,
                ))
            }
        }
        steps = rest.get(1..).unwrap_or_default();
    }
    if include.is_some() && accumulate.is_none() {
        return Err(Error::syntax(
            ":include-outputs-from chooses what :accumulate gathers: give :accumulate too",
            items.first().map_or(_span, |head| head.span),
        ));
    }
    let mut names = vec![*well_known::STEP_RESULTS];
    if accumulate.is_some() {
        names.push(Sym::new("accumulated"));
    }
    let scope = Scope::new(names);
    compiler.push_scope(scope.clone());
    let steps = steps
        .iter()
        .map(|s| compiler.compile(s).map(|node| (node, s.span)))
        .collect::<Result<Vec<_>>>();
    compiler.pop_scope();
    Ok(Node::Extension(Box::new(Sequential {
        scope,
        accumulate,
        include,
        steps: steps?,
    })))
}

/// `:accumulate "full_output"` or `"notes_only"`.
fn accumulation(value: &Syntax) -> Result<Accumulate> {
    match &value.kind {
        SyntaxKind::Str(s) if s.as_str() == "full_output" => Ok(Accumulate::FullOutput),
        SyntaxKind::Str(s) if s.as_str() == "notes_only" => Ok(Accumulate::NotesOnly),
        _ => Err(Error::syntax(
            format!(":accumulate is {ACCUMULATION_FORMATS}"),
            value.span,
        )),
    }
}

/// The earlier steps' outputs for `{{accumulated}}`: each after `--- step N (task) ---`,
/// only those `included` names when it is given.
fn accumulated(format: Accumulate, results: &[Value], included: Option<&[Value]>) -> Value {
    let parts: Vec<String> = results
        .iter()
        .enumerate()
        .filter(|(index, result)| included.is_none_or(|chosen| selected(chosen, *index, result)))
        .map(|(index, result)| {
            let notes = field(result, "notes");
            let producer = match field(&notes, "task") {
                Value::Str(task) => format!(" ({task})"),
                _ => String::new(),
            };
            let shown = match format {
                Accumulate::FullOutput if super::result::is_task_result(result) => {
                    text_of(&field(result, "content"))
                }
                Accumulate::FullOutput => text_of(result),
                Accumulate::NotesOnly if matches!(notes, Value::Nil) => "{}".to_owned(),
                Accumulate::NotesOnly => lossy_json(&notes).to_string(),
            };
            format!("--- step {index}{producer} ---\n{shown}")
        })
        .collect();
    Value::str(parts.join("\n"))
}

fn text_of(value: &Value) -> String {
    match value {
        Value::Str(s) => s.to_string(),
        other => lossy_json(other).to_string(),
    }
}

impl Extension for Sequential {
    fn eval(&self, interp: &Interp, env: &Env) -> Result<Value> {
        let mut slots = vec![Value::empty_list()];
        if self.accumulate.is_some() {
            slots.push(Value::str(String::new()));
        }
        let frame = Frame::new(self.scope.clone(), slots, env.clone());
        interp.with_frame(frame, |inner| self.run_steps(interp, inner))
    }
}

impl Sequential {
    /// The steps in order in `inner`, the frame whose slots hold the results so far.
    fn run_steps(&self, interp: &Interp, inner: &Env) -> Result<Value> {
        let included = match &self.include {
            Some(node) => Some(selectors(
                &interp.eval(node, inner)?,
                ":include-outputs-from",
            )?),
            None => None,
        };
        let mut results: Vec<Value> = Vec::with_capacity(self.steps.len());
        for (index, (step, span)) in self.steps.iter().enumerate() {
            let value = interp
                .eval(step, inner)
                .map_err(|e| step_failure(interp, index, &results, e, *span))?;
            results.push(value);
            if let Some(frame) = inner {
                let _in_range = frame.set(0, Value::list(results.clone()));
                if let Some(format) = self.accumulate {
                    let gathered = accumulated(format, &results, included.as_deref());
                    let _in_range = frame.set(1, gathered);
                }
            }
        }
        Ok(results.pop().unwrap_or(Value::Nil))
    }
}

fn step_failure(
    interp: &Interp,
    index: usize,
    before: &[Value],
    error: Error,
    span: Span,
) -> Error {
    if error.exit_code().is_some() || interp.interrupted() {
        return error;
    }
    // A limit passed (nesting, memory, a budget) ends the whole program, not one step:
    // it leaves the sequence as itself, with the step in its trace, so a cycle of task
    // references reports the exhaustion at the top.
    // So does a VALIDATION_ERROR: the program's data does not fit its shape (a builder's
    // non-map), which no later step can mend; it keeps its `path` and `invalidModel`.
    if matches!(
        error.kind(),
        ErrorKind::ResourceExhaustion | ErrorKind::Validation
    ) {
        let trace = super::trace::in_step(&error, index);
        return error.with_detail("trace", trace);
    }
    // The innermost cause, stated once however deep the steps nest.
    let cause = match error.details().get("cause") {
        Some(cause) if error.has_reason(&Reason::SubtaskFailure) => cause.clone(),
        _ => json!(error.to_string()),
    };
    let wrapped = Error::task_failure(
        Reason::SubtaskFailure,
        format!("step {index} failed: {}", cause.as_str().unwrap_or("")),
    )
    .with_details(json!({
        "step": index,
        "step_results": before.iter().map(lossy_json).collect::<Vec<_>>(),
        "subtaskError": error.to_json(),
        "cause": cause,
        "trace": super::trace::in_step(&error, index),
    }));
    wrapped.with_span(error.span().unwrap_or(span))
}

/// A `step`: the task, its arguments, and the step's own options.
struct Step {
    results: Node,
    task: Node,
    args: Vec<Node>,
    inputs_from: Option<Node>,
    input: Option<Node>,
    audits: Option<Node>,
    retries: Option<Node>,
    /// `:on-builder-error :result`: a failing builder makes the step a FAILED result
    /// instead of failing the sequence.
    builder_error_as_result: bool,
    span: Span,
}

const STEP_OPTIONS: &[&str] = &[
    "inputs-from",
    "input",
    "audits",
    "retries",
    "on-builder-error",
];

pub fn step(compiler: &mut Compiler, items: &[Syntax], span: Span) -> Result<Node> {
    let results = compiler.variable(*well_known::STEP_RESULTS, span);
    if !matches!(results, Node::Local { .. }) {
        return Err(Error::syntax(
            "`step` is only allowed inside `sequential`",
            span,
        ));
    }
    let task = items.get(1).ok_or_else(|| {
        Error::syntax(
            "bad syntax: expected (step task arg… :inputs-from […] :input builder)",
            span,
        )
    })?;
    let mut step = Step {
        results,
        task: compiler.compile(task)?,
        args: Vec::new(),
        inputs_from: None,
        input: None,
        audits: None,
        retries: None,
        builder_error_as_result: false,
        span,
    };
    let mut rest = items.get(2..).unwrap_or_default();
    while let [first, more @ ..] = rest {
        let option = match first.kind {
            SyntaxKind::Keyword(k) if STEP_OPTIONS.contains(&k.name()) => k.name(),
            _ => {
                step.args.push(compiler.compile(first)?);
                rest = more;
                continue;
            }
        };
        let value = more.first().ok_or_else(|| {
            Error::syntax(format!("step option :{option} needs a value"), first.span)
        })?;
        if option == "on-builder-error" {
            step.builder_error_as_result = builder_error_mode(value)?;
            rest = more.get(1..).unwrap_or_default();
            continue;
        }
        let node = Some(compiler.compile(value)?);
        match option {
            "inputs-from" => step.inputs_from = node,
            "input" => step.input = node,
            "audits" => step.audits = node,
            _ => step.retries = node,
        }
        rest = more.get(1..).unwrap_or_default();
    }
    if step.inputs_from.is_some() && step.input.is_none() {
        return Err(Error::syntax(
            "`:inputs-from` needs an `:input` builder",
            span,
        ));
    }
    Ok(Node::Extension(Box::new(step)))
}

/// `:on-builder-error :result` (or `"result"`) or `:raise`, the default.
fn builder_error_mode(value: &Syntax) -> Result<bool> {
    let word = match &value.kind {
        SyntaxKind::Keyword(k) => k.name().to_owned(),
        SyntaxKind::Str(s) => s.to_string(),
        _ => String::new(),
    };
    match word.as_str() {
        "result" => Ok(true),
        "raise" => Ok(false),
        _ => Err(Error::syntax(
            ":on-builder-error is :result or :raise",
            value.span,
        )),
    }
}

impl Extension for Step {
    fn eval(&self, interp: &Interp, env: &Env) -> Result<Value> {
        self.run(interp, env).map_err(|e| e.or_span(self.span))
    }
}

impl Step {
    fn run(&self, interp: &Interp, env: &Env) -> Result<Value> {
        let task = match interp.eval(&self.task, env)? {
            Value::Task(task) => task,
            other => return Err(type_error("step", "a task", &other)),
        };
        let mut args = self
            .args
            .iter()
            .map(|node| interp.eval(node, env))
            .collect::<Result<Vec<_>>>()?;
        if let Some(builder) = &self.input {
            match self.built_arguments(interp, builder, env) {
                Ok(built) => args.extend(built),
                Err(error) if self.builder_error_as_result && is_builder_failure(&error) => {
                    return Ok(builder_failed(&task.name, &error));
                }
                Err(error) => return Err(error),
            }
        }
        let checks = Checks {
            audits: match &self.audits {
                Some(node) => {
                    let value = interp.eval(node, env)?;
                    audit_list(&value).ok_or_else(|| {
                        type_error(
                            "step :audits",
                            "a procedure or a list of procedures",
                            &value,
                        )
                    })?
                }
                None => Vec::new(),
            },
            retries: match &self.retries {
                Some(node) => match interp.eval(node, env)? {
                    Value::Int(n) if n >= 0 => u32::try_from(n).unwrap_or(u32::MAX),
                    other => {
                        return Err(type_error(
                            "step :retries",
                            "a non-negative integer",
                            &other,
                        ))
                    }
                },
                None => 0,
            },
        };
        call_checked(interp, &task, &args, env, &checks)
    }
}

impl Step {
    /// The named arguments the `:input` builder returns, from the earlier results
    /// `:inputs-from` chooses.
    fn built_arguments(&self, interp: &Interp, builder: &Node, env: &Env) -> Result<Vec<Value>> {
        let builder = interp.eval(builder, env)?;
        let earlier = interp
            .eval(&self.results, env)?
            .as_list()
            .unwrap_or_default()
            .to_vec();
        let chosen = match &self.inputs_from {
            Some(node) => choose(&earlier, &interp.eval(node, env)?)?,
            None => Vec::new(),
        };
        let built = interp
            .apply(&builder, &[Value::list(chosen)], env)
            .map_err(|e| {
                if e.exit_code().is_some() || interp.interrupted() {
                    return e;
                }
                invalid_input(format!("the :input builder failed: {e}"))
                    .with_detail("cause", e.to_json())
            })?;
        match built {
            Value::Nil => Ok(Vec::new()),
            Value::Map(map) => Ok(map
                .entries
                .iter()
                .flat_map(|(key, value)| [Value::data_keyword(key), value.clone()])
                .collect()),
            other => Err(Error::invalid_model(
                format!(
                    "the :input builder must return a map of arguments, not {}",
                    write_string(&other)
                ),
                "",
                &lossy_json(&other),
            )),
        }
    }
}

/// A failure of the builder itself, not an interrupt, an `exit` or a limit passed: only
/// those become a FAILED step.
fn is_builder_failure(error: &Error) -> bool {
    error.has_reason(&Reason::InputValidationFailure)
}

/// The step's result when its builder failed under `:on-builder-error :result`: status
/// `FAILED`, the problem as a critical issue, the error map as `notes.error`.
fn builder_failed(task: &str, error: &Error) -> Value {
    let issue = Value::map(
        [
            (Rc::from("severity"), Value::from("critical")),
            (Rc::from("message"), Value::str(error.message())),
        ]
        .into_iter()
        .collect(),
    );
    let mut notes = crate::value::Entries::new();
    notes.insert(Rc::from("issues"), Value::list(vec![issue]));
    notes.insert(Rc::from("error"), crate::value::from_json(&error.to_json()));
    let result = super::result::task_result(task, String::new(), Value::Nil, notes);
    super::result::with_entry(&result, "status", Value::from(super::result::FAILED))
}

fn invalid_input(message: String) -> Error {
    Error::task_failure(Reason::InputValidationFailure, message)
}

/// The selectors of `:inputs-from` or `:include-outputs-from`: a list of step indexes
/// and task names.
fn selectors(value: &Value, option: &str) -> Result<Vec<Value>> {
    let list = value.as_list().ok_or_else(|| {
        invalid_input(format!(
            "{option} must be a list, not {}",
            write_string(value)
        ))
    })?;
    list.iter()
        .map(|selector| match selector {
            chosen @ (Value::Int(_) | Value::Str(_)) => Ok(chosen),
            other => Err(invalid_input(format!(
                "{option} takes step indexes and task names, not {}",
                write_string(&other)
            ))),
        })
        .collect()
}

/// Whether the result of step `index` is one the selectors name: its index, or the
/// name of the task that produced it (`notes.task`).
fn selected(chosen: &[Value], index: usize, result: &Value) -> bool {
    chosen.iter().any(|selector| match selector {
        Value::Int(i) => usize::try_from(*i).ok() == Some(index),
        Value::Str(name) => produced_by(result, name),
        _ => false,
    })
}

fn produced_by(result: &Value, name: &str) -> bool {
    field(&field(result, "notes"), "task").as_str() == Some(name)
}

/// The earlier results `:inputs-from` names: an index, or the latest step that called
/// the task of that name.
fn choose(earlier: &[Value], selectors_value: &Value) -> Result<Vec<Value>> {
    selectors(selectors_value, ":inputs-from")?
        .iter()
        .map(|selector| {
            let found = match selector {
                Value::Int(i) => usize::try_from(*i).ok().and_then(|i| earlier.get(i)),
                Value::Str(name) => earlier.iter().rev().find(|r| produced_by(r, name)),
                _ => None,
            };
            found.cloned().ok_or_else(|| {
                invalid_input(format!(
                    ":inputs-from {}: no such earlier step (there are {})",
                    write_string(selector),
                    earlier.len()
                ))
            })
        })
        .collect()
}

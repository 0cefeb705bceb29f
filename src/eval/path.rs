//! Path access: `a.b[0].c` applied to a value, with errors that name the failing step.

use super::Interp;
use crate::builtins::article;
use crate::error::Error;
use crate::eval::reader::{PathSpec, PathStep};
use crate::value::Value;

/// A failed path step; becomes an `EVAL_ERROR` with the call site's span.
pub struct PathError(String);

impl PathError {
    pub fn into_error(self) -> Error {
        Error::eval(self.0)
    }
}

fn step_text(step: &PathStep) -> String {
    match step {
        PathStep::Key(k) => format!(".{k}"),
        PathStep::Index(i) => format!("[{i}]"),
    }
}

/// `prefix` followed by `step`, as the program would write it (`.b` after nothing is `b`).
fn extend_path(prefix: &str, step: &PathStep) -> String {
    match step {
        PathStep::Key(k) if prefix.is_empty() => k.to_string(),
        _ => format!("{prefix}{}", step_text(step)),
    }
}

/// Applies the steps of `path` to `base` (the value of its base name; a path with an
/// empty base name, as `(path v "a.b")` makes, names its steps only).
pub fn access_path(base: &Value, path: &PathSpec, interp: &Interp) -> Result<Value, PathError> {
    let mut current = base.clone();
    let mut prefix = path.base.name().to_owned();
    for step in &path.steps {
        let next = step_into(&current, step, interp).map_err(|why| {
            let full = path.text.as_str();
            let subject = if prefix.is_empty() {
                "the value"
            } else {
                prefix.as_str()
            };
            match why {
                StepFailure::Nil => PathError(format!(
                    "cannot access property of nil: {full} ({subject} is nil)"
                )),
                StepFailure::OutOfRange(len) => PathError(format!(
                    "invalid array access: {} (length {len})",
                    extend_path(&prefix, step)
                )),
                StepFailure::WrongType(what) => PathError(format!(
                    "cannot apply {} to {}: {full} ({subject} is {})",
                    match step {
                        PathStep::Key(_) => "a property access",
                        PathStep::Index(_) => "an index",
                    },
                    article(what),
                    article(what)
                )),
            }
        })?;
        prefix = extend_path(&prefix, step);
        current = next;
    }
    Ok(current)
}

pub enum StepFailure {
    Nil,
    OutOfRange(usize),
    WrongType(&'static str),
}

/// One step of a path: `.key` on a map-like value, `[i]` on a list.
pub fn step_into(value: &Value, step: &PathStep, interp: &Interp) -> Result<Value, StepFailure> {
    match (value, step) {
        (Value::Nil, _) => Err(StepFailure::Nil),
        (Value::Map(m), PathStep::Key(k)) => Ok(m.get(k).cloned().unwrap_or(Value::Nil)),
        (Value::Task(t), PathStep::Key(k)) => Ok(t.field(k)),
        (Value::Library, PathStep::Key(k)) => Ok(interp.tasks.library_field(k)),
        (Value::List(..), PathStep::Index(i)) => {
            let list = value.as_list().unwrap_or_default();
            usize::try_from(*i)
                .ok()
                .and_then(|i| list.get(i))
                .ok_or(StepFailure::OutOfRange(list.len()))
        }
        (other, _) => Err(StepFailure::WrongType(other.type_name())),
    }
}

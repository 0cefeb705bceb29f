//! Failure chains: an error that crosses task calls records each one in `details.trace`
//! (outermost first, `{"task" "step" "file" "line"}`), so the report can state the
//! innermost cause once and then where it happened, on one line
//! (`Error::chain`): `in release › step 0 › check-all › step 0 › check-file`.

use super::definition::Task;
use crate::error::Error;
use crate::source;
use serde_json::{json, Value as Json};

/// The error leaving a call of `task`: the task is added in front of the trace, or
/// named in the entry its own `sequential` started (which knows the step).
pub fn crossed(error: Error, task: &Task) -> Error {
    if error.exit_code().is_some() {
        return error;
    }
    let mut trace = entries(&error);
    let (file, line) = place(task);
    match trace.first_mut() {
        Some(Json::Object(entry)) if entry.get("task").is_none_or(Json::is_null) => {
            entry.insert("task".into(), json!(task.name));
            entry.insert("file".into(), file);
            entry.insert("line".into(), line);
        }
        _ => trace.insert(
            0,
            json!({"task": task.name, "step": null, "file": file, "line": line}),
        ),
    }
    error.with_detail("trace", Json::Array(trace))
}

/// The trace of an error raised by step `step` of a `sequential`: the step's error's
/// trace with an entry for the step in front (the enclosing task fills in its name).
pub fn in_step(inner: &Error, step: usize) -> Json {
    let mut trace = entries(inner);
    trace.insert(
        0,
        json!({"task": null, "step": step, "file": null, "line": null}),
    );
    Json::Array(trace)
}

fn entries(error: &Error) -> Vec<Json> {
    match error.details().get("trace") {
        Some(Json::Array(entries)) => entries.clone(),
        _ => Vec::new(),
    }
}

/// Where the task was defined, as `file` and `line` (null when not known).
fn place(task: &Task) -> (Json, Json) {
    let Some(span) = task.span else {
        return (Json::Null, Json::Null);
    };
    match source::source(span.source) {
        Some(file) => {
            let (line, _) = source::line_col(&file.text, span.start as usize);
            (json!(file.name), json!(line))
        }
        None => (Json::Null, Json::Null),
    }
}

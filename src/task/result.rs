//! TaskResults: the maps every task call returns, marked so that they are told apart from
//! plain data with the same keys.

use super::definition::lossy_json;
use crate::value::{Entries, Map, Value};
use std::rc::Rc;

pub const COMPLETE: &str = "COMPLETE";
pub const FAILED: &str = "FAILED";
/// The statuses a TaskResult can have.
pub const STATUSES: [&str; 3] = [COMPLETE, "CONTINUATION", FAILED];

/// A TaskResult with `notes.task` set to `task`.
pub fn task_result(task: &str, content: String, parsed: Value, mut notes: Entries) -> Value {
    notes.shift_insert(0, Rc::from("task"), Value::from(task));
    let mut entries = Entries::new();
    entries.insert(Rc::from("content"), Value::from(content));
    entries.insert(Rc::from("status"), Value::from(COMPLETE));
    entries.insert(Rc::from("parsedContent"), parsed);
    entries.insert(Rc::from("notes"), Value::map(notes));
    marked(entries)
}

fn marked(entries: Entries) -> Value {
    Value::Map(Rc::new(Map {
        entries,
        task_result: true,
    }))
}

/// `entries` marked as a TaskResult when they are one: `content` a string, `status` one
/// of [`STATUSES`], `notes` a map.
pub fn marked_if_valid(entries: Entries) -> Option<Value> {
    is_valid(&entries).then(|| marked(entries))
}

/// Whether `entries` make a TaskResult: the task layer's `keeps_mark`, so an edited
/// TaskResult (`assoc`, `dissoc`, `merge`) stays one while it still is one.
pub fn is_valid(entries: &Entries) -> bool {
    matches!(entries.get("content"), Some(Value::Str(_)))
        && matches!(entries.get("status"), Some(Value::Str(s)) if STATUSES.contains(&s.as_str()))
        && matches!(entries.get("notes"), Some(Value::Map(_)))
}

pub fn is_task_result(value: &Value) -> bool {
    matches!(value, Value::Map(m) if m.task_result)
}

/// What a body task returns: a TaskResult as it is (it already names its producer);
/// plain data is wrapped (`content` the string or compact JSON, `parsedContent` the data).
pub fn from_body(task: &str, value: Value) -> Value {
    if is_task_result(&value) {
        return value;
    }
    let content = match &value {
        Value::Str(s) => s.to_string(),
        other => lossy_json(other).to_string(),
    };
    task_result(task, content, value, Entries::new())
}

/// A copy of a TaskResult with these notes set (added or replaced).
pub fn with_notes(result: &Value, notes: &[(&str, Value)]) -> Value {
    let Value::Map(map) = result else {
        return result.clone();
    };
    let mut entries = map.entries.clone();
    let mut note_entries = match entries.get("notes") {
        Some(Value::Map(old)) => old.entries.clone(),
        _ => Entries::new(),
    };
    for (key, value) in notes {
        note_entries.insert(Rc::from(*key), value.clone());
    }
    entries.insert(Rc::from("notes"), Value::map(note_entries));
    Value::Map(Rc::new(Map {
        entries,
        task_result: map.task_result,
    }))
}

/// A copy of a TaskResult with one key set, keeping its mark.
pub fn with_entry(result: &Value, key: &str, value: Value) -> Value {
    let Value::Map(map) = result else {
        return result.clone();
    };
    let mut entries = map.entries.clone();
    entries.insert(Rc::from(key), value);
    Value::Map(Rc::new(Map {
        entries,
        task_result: map.task_result,
    }))
}

/// The one-line warning the REPL and `tasklisp prompt` print on stderr for a result
/// whose answer the token limit cut off (`notes.truncated`): a plain-text answer stays
/// a result, so nothing else would tell.
pub fn cut_off_warning(result: &Value) -> Option<String> {
    if !is_task_result(result) {
        return None;
    }
    let notes = field(result, "notes");
    if !field(&notes, "truncated").is_truthy() {
        return None;
    }
    let reason = field(&notes, "finishReason");
    Some(format!(
        "warning: the answer was cut off by the token limit (finish reason {}); raise max_tokens for the whole answer",
        crate::value::write_string(&reason)
    ))
}

/// An evaluator's score (`notes.successScore`): its `successScore`, else its `score` when
/// that is a number from 0 to 1 (a `score` on another scale is the evaluator's own), read
/// from `parsed` (its answer), else from `notes`. A `successScore` that is not a number
/// from 0 to 1 is an `output_format_failure` naming it.
pub fn success_score(parsed: &Value, notes: &Value) -> crate::error::Result<Option<f64>> {
    let read = |key: &str| {
        [parsed, notes]
            .into_iter()
            .map(|from| field(from, key))
            .find(|value| !matches!(value, Value::Nil))
    };
    if let Some(declared) = read("successScore") {
        return match unit_number(&declared) {
            Some(score) => Ok(Some(score)),
            None => Err(score_error(&declared)),
        };
    }
    Ok(read("score").as_ref().and_then(unit_number))
}

/// A number from 0 to 1.
fn unit_number(value: &Value) -> Option<f64> {
    let number = match value {
        Value::Int(n) => *n as f64,
        Value::Float(x) => *x,
        _ => return None,
    };
    (0.0..=1.0).contains(&number).then_some(number)
}

fn score_error(score: &Value) -> crate::error::Error {
    crate::error::Error::task_failure(
        crate::error::Reason::OutputFormatFailure,
        format!(
            "an evaluator's successScore must be a number from 0 to 1, got {}",
            crate::value::write_prefix(score, 60)
        ),
    )
}

pub fn field(result: &Value, key: &str) -> Value {
    result
        .as_map()
        .and_then(|m| m.get(key))
        .cloned()
        .unwrap_or(Value::Nil)
}

impl super::Task {
    /// This task's answer read as a predicate's verdict: its `parsedContent`, which must
    /// be a boolean (`filter`, `every?` … judge items by a task this way).
    pub fn verdict(&self, answer: &Value) -> crate::error::Result<bool> {
        match field(answer, "parsedContent") {
            Value::Bool(verdict) => Ok(verdict),
            other => Err(crate::error::Error::task_failure(
                crate::error::Reason::OutputFormatFailure,
                format!(
                    "a predicate task must answer true or false: `{}` answered {}",
                    self.name,
                    crate::value::write_prefix(&other, 80)
                ),
            )
            .with_detail("task", serde_json::json!(self.name))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_data_is_wrapped() {
        let r = from_body("t", Value::list(vec![Value::Int(1), Value::from("a")]));
        assert!(is_task_result(&r));
        assert_eq!(field(&r, "content").as_str(), Some("[1,\"a\"]"));
        assert_eq!(field(&r, "status").as_str(), Some("COMPLETE"));
        let notes = field(&r, "notes");
        assert_eq!(field(&notes, "task").as_str(), Some("t"));
        let s = from_body("t", Value::from("hi"));
        assert_eq!(field(&s, "content").as_str(), Some("hi"));
        assert_eq!(field(&s, "parsedContent").as_str(), Some("hi"));
    }

    #[test]
    fn a_result_is_returned_as_it_is() {
        let inner = task_result("inner", "x".into(), Value::Nil, Entries::new());
        let outer = from_body("outer", inner);
        assert_eq!(field(&outer, "content").as_str(), Some("x"));
        assert_eq!(
            field(&field(&outer, "notes"), "task").as_str(),
            Some("inner")
        );
    }
}

//! TaskResults: the maps every task call returns, marked so that they are told apart from
//! plain data with the same keys.

use super::definition::{lossy_json, Task};
use crate::error::Result;
use crate::value::{from_json, Entries, Map, Value};
use std::rc::Rc;

pub const COMPLETE: &str = "COMPLETE";

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

pub fn is_task_result(value: &Value) -> bool {
    matches!(value, Value::Map(m) if m.task_result)
}

/// What a body task returns: a TaskResult is re-stamped with this task as its producer;
/// plain data is wrapped (`content` the string or compact JSON, `parsedContent` the data).
pub fn from_body(task: &str, value: Value) -> Value {
    if is_task_result(&value) {
        return with_notes(&value, &[("task", Value::from(task))]);
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

/// A copy of a TaskResult with one more top-level key (such as `conversation`).
pub fn with_field(result: &Value, key: &str, value: Value) -> Value {
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

pub fn field(result: &Value, key: &str) -> Value {
    result
        .as_map()
        .and_then(|m| m.get(key))
        .cloned()
        .unwrap_or(Value::Nil)
}

/// Parses a task's text output as its definition asks. Without JSON output it is nil.
/// With it, a parse failure is recorded (the message goes into `notes.parseError`); with
/// a schema, output that does not match is `output_format_failure`.
pub fn parse_output(task: &Task, content: &str, notes: &mut Entries) -> Result<Value> {
    if !task.json_output {
        return Ok(Value::Nil);
    }
    match serde_json::from_str::<serde_json::Value>(strip_code_fence(content)) {
        Ok(json) => {
            if let Some(schema) = &task.schema {
                schema.check(&json)?;
            }
            Ok(from_json(&json))
        }
        Err(e) => {
            if let Some(schema) = &task.schema {
                return Err(schema.not_json(&e));
            }
            notes.insert(Rc::from("parseError"), Value::from(e.to_string()));
            Ok(Value::Nil)
        }
    }
}

/// Models often wrap JSON in a Markdown code fence: the JSON is what is inside.
pub fn strip_code_fence(text: &str) -> &str {
    let trimmed = text.trim();
    let Some(inner) = trimmed.strip_prefix("```") else {
        return text;
    };
    let Some(inner) = inner.strip_suffix("```") else {
        return text;
    };
    match inner.find('\n') {
        Some(newline) => &inner[newline + 1..],
        None => inner,
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
    fn a_result_is_restamped_not_rewrapped() {
        let inner = task_result("inner", "x".into(), Value::Nil, Entries::new());
        let outer = from_body("outer", inner);
        assert_eq!(field(&outer, "content").as_str(), Some("x"));
        assert_eq!(
            field(&field(&outer, "notes"), "task").as_str(),
            Some("outer")
        );
    }

    #[test]
    fn code_fences_are_stripped() {
        assert_eq!(strip_code_fence("```json\n{\"a\":1}\n```"), "{\"a\":1}\n");
        assert_eq!(strip_code_fence("```[1]```"), "[1]");
        assert_eq!(strip_code_fence("not json"), "not json");
    }
}

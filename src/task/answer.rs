//! A task's answer as data: lenient JSON parsing, conversion toward the schema, and the
//! failures that show what the model said.

use super::definition::Task;
use super::lenient;
use crate::error::{Error, Reason, Result};
use crate::value::{from_json, Entries, Value};
use serde_json::{json, Value as Json};
use std::rc::Rc;

/// How many characters of the answer end a failure's message.
const QUOTED_CHARS: usize = 200;

/// An answer and who gave it, for the details of a failure.
pub struct Answer<'a> {
    pub content: &'a str,
    /// The provider's name; `None` for a program's output or a body's value.
    pub provider: Option<&'a str>,
    pub model: Option<&'a str>,
    pub round: u32,
}

/// Parses an answer as the task's definition asks. Without JSON output it is nil. With
/// it, the answer is parsed leniently (unless `:strict-json`) and the repairs go to
/// `notes.repairs`; a failure to parse is recorded in `notes.parseError`, or with a
/// schema raised as `output_format_failure`, as is output that does not match.
pub fn parse_output(task: &Task, answer: &Answer, notes: &mut Entries) -> Result<Value> {
    if !task.json_output {
        return Ok(Value::Nil);
    }
    match lenient::parse(answer.content, task.strict_json) {
        Ok(parsed) => {
            let mut value = parsed.value;
            let mut repairs: Vec<String> = parsed.repairs.iter().map(|r| r.to_string()).collect();
            if let Some(schema) = &task.schema {
                let coerced = schema
                    .conform(&mut value)
                    .map_err(|e| showing_answer(e, task, answer))?;
                repairs.extend(coerced);
            }
            if !repairs.is_empty() {
                let names = repairs.into_iter().map(Value::from).collect();
                notes.insert(Rc::from("repairs"), Value::list(names));
            }
            Ok(from_json(&value))
        }
        Err(failure) => match &task.schema {
            Some(schema) => {
                let error = Error::task_failure(
                    Reason::OutputFormatFailure,
                    format!(
                        "Expected JSON output but it does not parse: {}",
                        failure.message
                    ),
                )
                .with_details(json!({
                    "expectedType": schema.expected_type(),
                    "actualType": "invalid JSON",
                    "location": "",
                    "errors": [{"pointer": "", "message": failure.message}],
                    "truncated": failure.truncated,
                }));
                Err(showing_answer(error, task, answer))
            }
            None => {
                notes.insert(Rc::from("parseError"), Value::from(failure.message));
                Ok(Value::Nil)
            }
        },
    }
}

/// A `:choice` task's answer: the choice it is (surrounding whitespace aside), or an
/// `output_format_failure` that `:retries` asks again. `None` for other tasks.
pub fn check_choice(task: &Task, answer: &Answer) -> Result<Option<String>> {
    let choices = &task.constraints.choice;
    if choices.is_empty() {
        return Ok(None);
    }
    let given = answer.content.trim();
    if let Some(choice) = choices.iter().find(|c| c.as_str() == given) {
        return Ok(Some(choice.clone()));
    }
    let quoted: Vec<String> = choices
        .iter()
        .map(|c| Json::from(c.as_str()).to_string())
        .collect();
    let message = format!("the answer must be exactly one of {}", quoted.join(", "));
    let error = Error::task_failure(Reason::OutputFormatFailure, &message).with_details(json!({
        "expected": choices,
        "errors": [{"pointer": "", "message": message}],
    }));
    Err(showing_answer(error, task, answer))
}

/// An answer the token limit cut off, for a task that wants JSON: never parsed nor
/// repaired (a repair would pass off part of the answer as the whole), and not asked
/// again by `:retries` (the same limit would cut it again).
pub fn cut_off(task: &Task, answer: &Answer, finish_reason: &Option<String>) -> Error {
    let error = Error::task_failure(
        Reason::OutputFormatFailure,
        format!(
            "the answer was cut off by the token limit (finish reason {:?}): raise \
             max_tokens (e.g. -o max_tokens 4096 or the task's :max-tokens) or ask for a \
             shorter answer",
            finish_reason.as_deref().unwrap_or_default()
        ),
    );
    showing_answer(error, task, answer).with_detail("finishReason", json!(finish_reason))
}

/// Adds the answer to an output failure: its whole text and who gave it in the details,
/// its first characters at the end of the message.
pub fn showing_answer(error: Error, task: &Task, answer: &Answer) -> Error {
    let message = format!(
        "{} — the answer: {}",
        error.message(),
        first_chars(answer.content, QUOTED_CHARS)
    );
    error.with_message(message).with_details(json!({
        "content": answer.content,
        "provider": answer.provider,
        "model": answer.model,
        "task": task.name,
        "round": answer.round,
    }))
}

fn first_chars(text: &str, n: usize) -> &str {
    match text.char_indices().nth(n) {
        Some((end, _)) => &text[..end],
        None => text,
    }
}

/// The problems of a failed answer, one issue each (`{"severity" "critical" "message" …
/// "pointer" …}`), for the next round's request; `None` when the error is not about
/// this task's answer.
pub fn answer_problems(error: &Error, task: &Task) -> Option<Vec<Json>> {
    if !error.has_reason(&Reason::OutputFormatFailure) {
        return None;
    }
    let details = error.details();
    if details.get("task").and_then(Json::as_str) != Some(task.name.as_str()) {
        return None;
    }
    let errors = details.get("errors").and_then(Json::as_array)?;
    Some(
        errors
            .iter()
            .map(|e| {
                let pointer = e.get("pointer").and_then(Json::as_str).unwrap_or("");
                let message = e.get("message").and_then(Json::as_str).unwrap_or("");
                let message = if pointer.is_empty() {
                    message.to_owned()
                } else {
                    format!("{pointer}: {message}")
                };
                json!({"severity": "critical", "message": message, "pointer": pointer})
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_message_ends_with_the_first_200_characters() {
        let long = "x".repeat(300);
        assert_eq!(first_chars(&long, 200).len(), 200);
        assert_eq!(first_chars("héllo", 2), "hé");
        assert_eq!(first_chars("ab", 200), "ab");
    }
}

//! Audits and retries (from the ToolFlow seeds): each round's result is checked by the
//! audit functions; a `critical` issue fails the call with `INVALID_OUTPUT` unless
//! `:retries` allows another round, which sees the issues (`issues`, `{{issues}}`).
//! An answer that does not parse or does not match the schema is re-asked the same way.

use super::answer::answer_problems;
use super::definition::{lossy_json, Action, Task};
use super::result::{field, with_notes};
use crate::env::Env;
use crate::error::{Error, ErrorKind, Result};
use crate::eval::Interp;
use crate::provider::Message;
use crate::value::{from_json, write_string, Value};
use serde_json::json;

/// Audits and extra rounds for one call.
#[derive(Default)]
pub struct Checks {
    pub audits: Vec<Value>,
    pub retries: u32,
}

/// `:audits`: one procedure or a list of them (nil: none).
pub fn audit_list(value: &Value) -> Option<Vec<Value>> {
    match value {
        Value::Nil => Some(Vec::new()),
        audit if audit.is_procedure() => Some(vec![audit.clone()]),
        Value::List(..) => {
            let audits = value.as_list().unwrap_or_default().to_vec();
            audits.iter().all(Value::is_procedure).then_some(audits)
        }
        _ => None,
    }
}

/// Runs `attempt(round, issues, conversation)` until its result passes the audits or
/// the rounds run out. Results record `notes.rounds` (and `notes.issues` when audited).
///
/// `conversation` is what an atomic task sent, kept across rounds: empty in round 1 (the
/// task fills in its messages), then extended by the answer and a user message stating
/// its problems, so a further round asks again within the same conversation.
pub fn run_rounds(
    interp: &Interp,
    task: &Task,
    checks: &Checks,
    env: &Env,
    mut attempt: impl FnMut(u32, &[Value], &mut Vec<Message>) -> Result<Value>,
) -> Result<Value> {
    let mut issues: Vec<Value> = Vec::new();
    let mut conversation: Vec<Message> = Vec::new();
    let mut round: u32 = 1;
    loop {
        let result = match attempt(round, &issues, &mut conversation) {
            Ok(result) => result,
            Err(error) => match answer_problems(&error, task) {
                Some(problems) if round <= checks.retries => {
                    issues = problems.iter().map(from_json).collect();
                    let answer = error.details().get("content").and_then(|c| c.as_str());
                    reask(&mut conversation, answer.unwrap_or(""), &issues);
                    round += 1;
                    continue;
                }
                _ => return Err(error),
            },
        };
        if round <= checks.retries {
            if let Some(problem) = parse_problem(&result) {
                issues = vec![problem];
                reask(&mut conversation, &content_of(&result), &issues);
                round += 1;
                continue;
            }
        }
        let rounds = ("rounds", Value::Int(i64::from(round)));
        if checks.audits.is_empty() {
            return Ok(match task.action {
                Action::Body(..) => result,
                _ => with_notes(&result, &[rounds]),
            });
        }
        let found = audit(interp, &checks.audits, &result, env)?;
        let result = with_notes(&result, &[("issues", Value::list(found.clone())), rounds]);
        let violations: Vec<String> = found
            .iter()
            .filter(|i| is_critical(i))
            .map(message)
            .collect();
        if violations.is_empty() {
            return Ok(result);
        }
        // An answer that failed an audit is not one the cache may give again.
        interp
            .tasks
            .observer
            .reject_passed(&interp.state.task.observe);
        if round > checks.retries {
            return Err(invalid_output(task, round, &violations, &found, &result));
        }
        issues = found;
        reask(&mut conversation, &content_of(&result), &issues);
        round += 1;
    }
}

/// Extends an atomic task's conversation (left empty by other tasks) with its answer
/// and a user message listing the problems found in it.
fn reask(conversation: &mut Vec<Message>, answer: &str, issues: &[Value]) {
    if conversation.is_empty() {
        return;
    }
    conversation.push(Message::assistant(answer));
    conversation.push(Message::user(problems_text(issues)));
}

/// The user message of a further round: every problem, one line each.
pub fn problems_text(issues: &[Value]) -> String {
    let lines: Vec<String> = issues
        .iter()
        .map(|issue| match is_critical(issue) {
            true => format!("- {}", message(issue)),
            false => format!("- (warning) {}", message(issue)),
        })
        .collect();
    format!(
        "Your answer has these problems:\n{}\nAnswer again, with every problem fixed.",
        lines.join("\n")
    )
}

fn content_of(result: &Value) -> String {
    match field(result, "content") {
        Value::Str(s) => s.to_string(),
        other => write_string(&other),
    }
}

/// A JSON answer that did not parse (no schema, so it was not raised) as an issue.
fn parse_problem(result: &Value) -> Option<Value> {
    let error = field(&field(result, "notes"), "parseError");
    let message = error.as_str()?;
    Some(from_json(&json!({
        "severity": "critical",
        "message": format!("the answer is not JSON: {message}"),
        "pointer": "",
    })))
}

/// Every issue the audits find in `result`, in audit order.
fn audit(interp: &Interp, audits: &[Value], result: &Value, env: &Env) -> Result<Vec<Value>> {
    let mut issues = Vec::new();
    for audit in audits {
        let found = interp.apply(audit, std::slice::from_ref(result), env)?;
        match &found {
            Value::Nil => {}
            Value::Map(_) => issues.push(checked_issue(found.clone())?),
            Value::List(..) => {
                for issue in found.as_list().unwrap_or_default().iter() {
                    issues.push(checked_issue(issue)?);
                }
            }
            other => return Err(not_an_issue(other)),
        }
    }
    Ok(issues)
}

fn checked_issue(issue: Value) -> Result<Value> {
    match &issue {
        Value::Map(map) if map.get("message").is_some() => Ok(issue),
        other => Err(not_an_issue(other)),
    }
}

fn not_an_issue(value: &Value) -> Error {
    Error::eval(format!(
        "an audit returns a list of issues {{\"severity\" \"critical\"|\"warning\" \"message\" …}}, not {}",
        crate::value::write_prefix(value, 80)
    ))
}

fn is_critical(issue: &Value) -> bool {
    match field(issue, "severity") {
        Value::Str(s) => s.as_str() == "critical",
        other => other.keyword_name() == Some("critical"),
    }
}

fn message(issue: &Value) -> String {
    match field(issue, "message") {
        Value::Str(s) => s.to_string(),
        other => write_string(&other),
    }
}

fn invalid_output(
    task: &Task,
    rounds: u32,
    violations: &[String],
    issues: &[Value],
    result: &Value,
) -> Error {
    let plural = if rounds == 1 { "" } else { "s" };
    Error::new(
        ErrorKind::InvalidOutput,
        format!(
            "task `{}` failed its audits after {rounds} round{plural}: {}",
            task.name,
            violations.join("; ")
        ),
    )
    .with_details(json!({
        "violations": violations,
        "issues": issues.iter().map(lossy_json).collect::<Vec<_>>(),
        "rounds": rounds,
        "content": lossy_json(&field(result, "content")),
    }))
}

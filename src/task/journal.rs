//! The journal of a run: every step that reaches outside the program (a model call, a
//! script task's run, an MCP call, a human answer) with what it asked and what came
//! back, so `tasklisp resume` can run the program again answering those steps from the
//! journal and go on live after them.
//!
//! A step is named by its item and its number there. The program's own steps are item
//! `""`; a `pmap` takes the next number `s` of the item it runs in (`P`), and its item
//! `i` is `P` + `s:i/`. Each item numbers its steps from 0 in the order it makes them,
//! so the names do not depend on which items finish first.

use crate::error::{Error, Result};
use crate::eval::Interp;
use crate::runlog::JournalRow;
use serde_json::Value as Json;
use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

/// Where one thread of evaluation is in the journal: its item and the number of its
/// next step.
#[derive(Clone, Debug, Default)]
pub struct Cursor {
    item: Rc<str>,
    next: u32,
}

impl Cursor {
    fn take(&mut self) -> StepId {
        let step = self.next;
        self.next += 1;
        StepId {
            item: self.item.clone(),
            step,
        }
    }
}

/// A step's name.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct StepId {
    item: Rc<str>,
    step: u32,
}

impl std::fmt::Display for StepId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.item.is_empty() {
            write!(f, "step {}", self.step)
        } else {
            write!(f, "step {} of pmap item {}", self.step, self.item)
        }
    }
}

/// A journaled step: its kind (`model`, `script`, `mcp`, `human`), request (as the
/// journal wrote it: read only when the program's request is not the same text) and
/// answer.
struct Entry {
    kind: String,
    request: String,
    answer: Json,
}

/// The steps of the run being resumed, taken as the program makes them again.
#[derive(Default)]
pub struct Journal {
    from: RefCell<Option<String>>,
    steps: RefCell<HashMap<(Rc<str>, u32), Entry>>,
    /// `tasklisp resume --answer TEXT`: answers to the questions asked live, in order.
    answers: RefCell<std::collections::VecDeque<String>>,
    /// `--no-input`: a question stops the run even at a terminal.
    no_input: std::cell::Cell<bool>,
    /// `--approve-tools`: every tool call the model asks for waits for approval.
    approve_tools: std::cell::Cell<bool>,
}

impl Journal {
    /// Takes the journal of run `from`; a row that does not read is an error naming it
    /// (the journal is damaged), and nothing runs.
    pub fn load(&self, from: &str, rows: Vec<JournalRow>) -> std::result::Result<(), String> {
        let mut steps = HashMap::with_capacity(rows.len());
        for row in rows {
            let damaged = |what: &str, e: serde_json::Error| {
                format!(
                    "the journal of run {from} is damaged: the {what} of step {} of item {:?} \
                     does not read ({e})",
                    row.step, row.item
                )
            };
            serde_json::from_str::<serde::de::IgnoredAny>(&row.request)
                .map_err(|e| damaged("request", e))?;
            let answer = serde_json::from_str(&row.answer).map_err(|e| damaged("answer", e))?;
            let entry = Entry {
                request: row.request,
                answer,
                kind: row.kind,
            };
            steps.insert((Rc::from(row.item), row.step), entry);
        }
        *self.steps.borrow_mut() = steps;
        *self.from.borrow_mut() = Some(from.to_owned());
        Ok(())
    }
}

impl Journal {
    pub fn set_answers(&self, answers: Vec<String>) {
        *self.answers.borrow_mut() = answers.into();
    }

    pub fn set_no_input(&self, on: bool) {
        self.no_input.set(on);
    }

    pub fn no_input(&self) -> bool {
        self.no_input.get()
    }

    pub fn set_approve_tools(&self, on: bool) {
        self.approve_tools.set(on);
    }

    pub fn approve_tools(&self) -> bool {
        self.approve_tools.get()
    }

    /// Whether `--answer` has an answer left for a question asked live.
    pub fn has_answer(&self) -> bool {
        !self.answers.borrow().is_empty()
    }

    /// The next answer `--answer` gave, for a question asked live.
    pub fn next_answer(&self) -> Option<String> {
        self.answers.borrow_mut().pop_front()
    }
}

/// What to do for a step.
pub enum Step {
    /// The journal has its answer.
    Replayed(Json),
    /// It runs: record its answer with [`record`].
    Live(StepId),
}

/// The next step of the current evaluation, answered from the journal when the run
/// being resumed made it; a journaled step that asked something else is an error naming
/// the step and the first difference.
pub fn begin(interp: &Interp, kind: &str, request: &Json) -> Result<Step> {
    let id = interp.state.task.journal.borrow_mut().take();
    let journal = &interp.tasks.journal;
    let Some(entry) = journal
        .steps
        .borrow_mut()
        .remove(&(id.item.clone(), id.step))
    else {
        if let Some(log) = interp.tasks.observer.log() {
            log.make_resumable();
        }
        return Ok(Step::Live(id));
    };
    if entry.kind == kind && same_request(&entry.request, request) {
        return Ok(Step::Replayed(entry.answer));
    }
    let from = journal.from.borrow().clone().unwrap_or_default();
    Err(mismatch(&from, &id, kind, &entry, request))
}

/// The journaled request (as written) asks what `request` asks. The same text is the
/// common case; one written by another version may differ only in the order of keys.
/// (The journal was checked to read when it was loaded.)
fn same_request(journaled: &str, request: &Json) -> bool {
    // Compared as text (not `journaled == *request`, which asks whether the request is
    // the JSON string `journaled`).
    let text = request.to_string();
    journaled == text || serde_json::from_str::<Json>(journaled).is_ok_and(|was| was == *request)
}

/// Steps are journaled (the run has a log) or replayed: what a step asks is worth
/// writing down.
pub fn active(interp: &Interp) -> bool {
    interp.tasks.observer.log().is_some() || !interp.tasks.journal.steps.borrow().is_empty()
}

/// Journals a step that ran live.
pub fn record(interp: &Interp, id: StepId, kind: &str, request: &Json, answer: &Json) {
    if let Some(log) = interp.tasks.observer.log() {
        log.record_step(JournalRow {
            item: id.item.to_string(),
            step: id.step,
            kind: kind.to_owned(),
            request: request.to_string(),
            answer: answer.to_string(),
        });
    }
}

/// A step answered from the journal, or run by `live` and journaled when it succeeds.
pub fn journaled(
    interp: &Interp,
    kind: &str,
    request: &Json,
    live: impl FnOnce() -> Result<Json>,
) -> Result<Json> {
    match begin(interp, kind, request)? {
        Step::Replayed(answer) => Ok(answer),
        Step::Live(id) => {
            let answer = live()?;
            record(interp, id, kind, request, &answer);
            Ok(answer)
        }
    }
}

/// A `pmap` starts in the current evaluation: it takes a step number, and its items'
/// names start with the returned prefix (see [`enter_item`]).
pub fn pmap_prefix(interp: &Interp) -> Rc<str> {
    let id = interp.state.task.journal.borrow_mut().take();
    Rc::from(format!("{}{}:", id.item, id.step))
}

/// The current evaluation is item `index` of the `pmap` whose prefix is `prefix`;
/// returns where it was, for [`leave_item`] when the item runs in it.
pub fn enter_item(interp: &Interp, prefix: &str, index: usize) -> Cursor {
    std::mem::replace(
        &mut *interp.state.task.journal.borrow_mut(),
        Cursor {
            item: Rc::from(format!("{prefix}{index}/")),
            next: 0,
        },
    )
}

pub fn leave_item(interp: &Interp, outer: Cursor) {
    *interp.state.task.journal.borrow_mut() = outer;
}

fn mismatch(from: &str, id: &StepId, kind: &str, entry: &Entry, request: &Json) -> Error {
    let was = serde_json::from_str(&entry.request).unwrap_or(Json::Null);
    let what = if entry.kind == kind {
        match first_difference("", &was, request) {
            Some((path, was, now)) => format!(
                "at `{path}` the journal has {} and the program now {}",
                excerpt(&was),
                excerpt(&now)
            ),
            None => "its request differs".to_owned(),
        }
    } else {
        format!(
            "the journal has a {} step and the program now makes a {kind} step",
            entry.kind
        )
    };
    Error::eval(format!(
        "cannot resume run {from}: {id} ({kind}) is not the journaled one: {what} (the \
         program or its inputs changed)"
    ))
    .with_details(serde_json::json!({
        "resumed_run": from,
        "item": id.item.as_ref(),
        "step": id.step,
        "kind": kind,
    }))
}

/// The first place where `was` and `now` differ: its path and both values there.
fn first_difference(path: &str, was: &Json, now: &Json) -> Option<(String, Json, Json)> {
    match (was, now) {
        (Json::Object(a), Json::Object(b)) => {
            let mut keys: Vec<&String> = a.keys().chain(b.keys()).collect();
            keys.sort();
            keys.dedup();
            keys.into_iter().find_map(|key| {
                let (x, y) = (
                    a.get(key).unwrap_or(&Json::Null),
                    b.get(key).unwrap_or(&Json::Null),
                );
                let inner = if path.is_empty() {
                    key.clone()
                } else {
                    format!("{path}.{key}")
                };
                first_difference(&inner, x, y)
            })
        }
        (Json::Array(a), Json::Array(b)) if a.len() == b.len() => a
            .iter()
            .zip(b)
            .enumerate()
            .find_map(|(i, (x, y))| first_difference(&format!("{path}[{i}]"), x, y)),
        _ if was == now => None,
        _ => Some((path.to_owned(), was.clone(), now.clone())),
    }
}

fn excerpt(value: &Json) -> String {
    crate::value::truncate_text(&value.to_string(), 120)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_first_difference_is_named_by_its_path() {
        let was = json!({"model": "m", "messages": [{"content": "a"}, {"content": "b"}]});
        let now = json!({"model": "m", "messages": [{"content": "a"}, {"content": "c"}]});
        let (path, a, b) = first_difference("", &was, &now).unwrap();
        assert_eq!(
            (path.as_str(), a, b),
            ("messages[1].content", json!("b"), json!("c"))
        );
        assert!(first_difference("", &was, &was).is_none());
    }

    #[test]
    fn a_journaled_request_is_the_same_in_any_order_of_its_keys() {
        let now = json!({"model": "m", "prompt": "p"});
        assert!(same_request(r#"{"model":"m","prompt":"p"}"#, &now));
        assert!(same_request(r#"{"prompt": "p", "model": "m"}"#, &now));
        assert!(!same_request(r#"{"model":"m","prompt":"q"}"#, &now));
        assert!(!same_request("{", &now));
    }

    #[test]
    fn steps_are_named_by_item_and_number() {
        let mut cursor = Cursor::default();
        assert_eq!(cursor.take().to_string(), "step 0");
        let mut item = Cursor {
            item: Rc::from("1:3/"),
            next: 0,
        };
        item.take();
        assert_eq!(item.take().to_string(), "step 1 of pmap item 1:3/");
    }
}

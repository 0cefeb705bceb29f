//! People in the loop: `ask-human`, and the approval a tool call waits for (a tool
//! offered with `:approve true`, or every tool under `--approve-tools`). An answer
//! comes from the journal on a resume, else from `tasklisp resume --answer`, else from
//! the terminal; with none the run stops with exit status 3, to be resumed with the
//! answer.

use super::journal;
use crate::builtins::{builtin_table, list_arg, split_options, str_arg};
use crate::error::{Error, Reason, Result};
use crate::eval::env::Env;
use crate::eval::Interp;
use crate::value::{display_string, Value};
use serde_json::{json, Value as Json};
use std::io::{BufRead, IsTerminal, Write};

builtin_table! {
    /// `(ask-human question :choices [c…])`: asks a person on the terminal and returns the answer, a string (one of the choices, when given). With no terminal, or under `--no-input`, the run stops with exit status 3, printing its id and the question; `tasklisp resume RUN --answer TEXT` goes on from there with that answer. `(ask-human "Publish it?" :choices ["yes" "no"])`
    "ask-human", 1, Some(3) => ask_human;
}

/// The exit status of a run stopped for an answer.
pub const WAITING: i32 = 3;

/// The reason of the error that stops a run for an answer (its status in the log is
/// `waiting`).
pub const WAITING_REASON: &str = "waiting_for_answer";

fn ask_human(interp: &Interp, args: &[Value], _: &Env) -> Result<Value> {
    let (rest, options) = split_options("ask-human", args, &["choices"])?;
    let [question] = rest else {
        return Err(crate::builtins::arity_error(
            "ask-human",
            1,
            Some(1),
            rest.len(),
        ));
    };
    let question = str_arg("ask-human", question)?;
    let mut choices = Vec::new();
    for (_, value) in options {
        choices = list_arg("ask-human :choices", &value)?
            .iter()
            .map(|choice| display_string(&choice))
            .collect();
    }
    Ok(Value::from(ask(interp, question, &choices)?.as_str()))
}

/// Asks a person `question`, journaled: the answer a resume replays, else one
/// `--answer` gave, else the terminal's.
pub fn ask(interp: &Interp, question: &str, choices: &[String]) -> Result<String> {
    let request = json!({"question": question, "choices": choices});
    let answer = journal::journaled(interp, "human", &request, || {
        live_answer(interp, question, choices).map(Json::from)
    })?;
    Ok(answer.as_str().unwrap_or_default().to_owned())
}

/// May the model's call of `tool` with `arguments` run? `y` (or `yes`) allows it.
pub fn approves(interp: &Interp, tool: &str, arguments: &Json) -> Result<bool> {
    let question = format!(
        "Run tool `{tool}` with {}?",
        crate::value::truncate_text(&arguments.to_string(), 400)
    );
    let answer = ask(interp, &question, &[])?;
    Ok(matches!(answer.trim(), "y" | "Y" | "yes" | "Yes"))
}

fn live_answer(interp: &Interp, question: &str, choices: &[String]) -> Result<String> {
    if let Some(answer) = interp.tasks.journal.next_answer() {
        return if choices.is_empty() || choices.contains(&answer) {
            Ok(answer)
        } else {
            Err(Error::validation(format!(
                "--answer {answer:?} is not one of the choices {}",
                shown(choices)
            )))
        };
    }
    if interp.tasks.journal.no_input() || !std::io::stdin().is_terminal() {
        return Err(waiting(interp, question, choices));
    }
    interp.flush();
    let mut stderr = std::io::stderr();
    loop {
        let offered = if choices.is_empty() {
            String::new()
        } else {
            format!(" {}", shown(choices))
        };
        let _ = write!(stderr, "{question}{offered} ");
        let _ = stderr.flush();
        let mut line = String::new();
        match std::io::stdin().lock().read_line(&mut line) {
            Ok(0) | Err(_) => return Err(waiting(interp, question, choices)),
            Ok(_) => {}
        }
        let answer = line.trim_end_matches(['\r', '\n']).to_owned();
        if choices.is_empty() || choices.contains(&answer) {
            return Ok(answer);
        }
        let _ = writeln!(stderr, "answer one of {}", shown(choices));
    }
}

fn shown(choices: &[String]) -> String {
    format!("[{}]", choices.join("/"))
}

/// Stops the run for an answer: says which run and how to go on.
fn waiting(interp: &Interp, question: &str, choices: &[String]) -> Error {
    let offered = if choices.is_empty() {
        String::new()
    } else {
        format!(" {}", shown(choices))
    };
    let how = match interp.tasks.observer.log() {
        Some(log) => format!(
            "run {} waits for an answer to: {question}{offered}\ngo on with: tasklisp \
             resume {} --answer TEXT",
            log.run_id(),
            log.run_id()
        ),
        None => format!(
            "the run waits for an answer to: {question}{offered}\nwith the run log off it \
             cannot be resumed"
        ),
    };
    crate::notice::emit(&format!("tasklisp: {how}"));
    Error::exit(WAITING).with_reason(Reason::Other(WAITING_REASON.into()))
}

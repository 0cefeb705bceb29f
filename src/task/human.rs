//! People in the loop: `ask-human`, and the approval a tool call waits for (a tool
//! offered with `:approve true`, or every tool under `--approve-tools`) — a call the
//! model asks for in the tool loop, or one that sandboxed code (a code agent's step,
//! `eval-sandboxed`) makes. An answer comes from the journal on a resume, else from
//! `tasklisp resume --answer`, else from the terminal; with none the run stops with exit
//! status 3, to be resumed with the answer. What a person is shown has its control
//! characters made visible (`terminal_safe`), and is shown whole.

use super::definition::{lossy_json, Task};
use super::journal;
use crate::builtins::{builtin_table, list_arg, split_options, str_arg};
use crate::error::{Error, Reason, Result};
use crate::eval::env::Env;
use crate::eval::Interp;
use crate::value::{display_string, terminal_safe, Value};
use serde_json::{json, Value as Json};
use std::io::{BufRead, IsTerminal, Write};

builtin_table! {
    /// `(ask-human question :choices [c…])`: asks a person on the terminal and returns the answer, a string (one of the choices, when given). With no terminal, or under `--no-input`, the run stops with exit status 3, printing its id and the question; `tasklisp resume RUN --answer TEXT` goes on from there with that answer. Sandboxed code (`eval-sandboxed`, a code agent's steps) may not ask. `(ask-human "Publish it?" :choices ["yes" "no"])`
    "ask-human", 1, Some(3) => ask_human;
}

/// The exit status of a run stopped for an answer.
pub const WAITING: i32 = 3;

/// The reason of the error that stops a run for an answer (its status in the log is
/// `waiting`).
pub const WAITING_REASON: &str = "waiting_for_answer";

fn ask_human(interp: &Interp, args: &[Value], _: &Env) -> Result<Value> {
    if interp.tasks.sandboxed() {
        // Its text would reach the person as if tasklisp asked, and the answer (a key
        // pasted on request, say) would go back to the code.
        return Err(Error::task_failure(
            Reason::PermissionDenied,
            "ask-human: sandboxed code may not ask a person (its caller can ask, before \
             or after, and pass the answer in :env)",
        ));
    }
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

/// Whether a call of `tool` the model made waits for a person: the tool says
/// `:approve true`, or `--approve-tools` is on.
fn needs_approval(interp: &Interp, tool: &Task) -> bool {
    tool.approve || interp.tasks.journal.approve_tools()
}

/// May the model's call of `tool` with `arguments` (a JSON object) run? It may when it
/// needs no approval, or when the person answers `y` (or `yes`) to the question, which
/// shows the arguments whole. In sandboxed code with no one to answer, it may not.
pub fn approved(interp: &Interp, tool: &Task, arguments: &Json) -> Result<bool> {
    if !needs_approval(interp, tool) {
        return Ok(true);
    }
    let question = approval_question(&tool.name, arguments);
    if interp.tasks.sandboxed() && !someone_answers(interp) {
        // Sandboxed code cannot stop the run for an answer: nothing it does is
        // journaled for a resume.
        crate::notice::emit(&format!(
            "tasklisp: not run, as no one can approve it here: {}",
            terminal_safe(&question, true)
        ));
        return Ok(false);
    }
    let answer = ask(interp, &question, &[])?;
    Ok(matches!(answer.trim(), "y" | "Y" | "yes" | "Yes"))
}

/// The approval of a call that sandboxed code makes of `tool` with `args` (evaluated, as
/// the task is called with them): a refusal is the call's error.
pub fn approve_code_call(interp: &Interp, tool: &Task, args: &[Value]) -> Result<()> {
    if !needs_approval(interp, tool) {
        return Ok(());
    }
    let bound = super::call::bind_arguments(tool, args)?;
    let arguments: serde_json::Map<String, Json> = tool
        .params
        .iter()
        .zip(&bound)
        .map(|(param, value)| (param.name.name().to_owned(), lossy_json(value)))
        .collect();
    if approved(interp, tool, &Json::Object(arguments))? {
        return Ok(());
    }
    Err(Error::task_failure(
        Reason::PermissionDenied,
        format!("the user did not allow this call of `{}`", tool.name),
    ))
}

/// The question of an approval: the tool's name and its arguments whole, one per line —
/// a part cut off could hide what the call does.
fn approval_question(tool: &str, arguments: &Json) -> String {
    let shown = serde_json::to_string_pretty(arguments).unwrap_or_else(|_| arguments.to_string());
    format!(
        "Run tool `{}` with these arguments ({} characters, shown whole)?\n{shown}\nAnswer y \
         to run it:",
        terminal_safe(tool, false),
        shown.chars().count()
    )
}

/// Whether a question asked now can be answered: by `--answer`, or at the terminal.
fn someone_answers(interp: &Interp) -> bool {
    let journal = &interp.tasks.journal;
    journal.has_answer() || (!journal.no_input() && std::io::stdin().is_terminal())
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
        let _ = write!(stderr, "{} ", shown_question(question, choices));
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

/// The choices as shown on the terminal: `[a/b]`.
fn shown(choices: &[String]) -> String {
    let safe: Vec<String> = choices.iter().map(|c| terminal_safe(c, false)).collect();
    format!("[{}]", safe.join("/"))
}

/// The question and its choices as a person sees them, control characters visible.
fn shown_question(question: &str, choices: &[String]) -> String {
    match choices.is_empty() {
        true => terminal_safe(question, true),
        false => format!("{} {}", terminal_safe(question, true), shown(choices)),
    }
}

/// Stops the run for an answer: says which run and how to go on — `tasklisp resume`
/// only where it can take the run up.
fn waiting(interp: &Interp, question: &str, choices: &[String]) -> Error {
    let question = shown_question(question, choices);
    let how = match interp.tasks.observer.log() {
        Some(log) if log.resumable() => format!(
            "run {} waits for an answer to: {question}\ngo on with: tasklisp resume {} \
             --answer TEXT",
            log.run_id(),
            log.run_id()
        ),
        Some(log) => format!(
            "run {} stopped for an answer to: {question}\nonly runs of `tasklisp run FILE` \
             can be resumed: run it where a person can answer at the terminal",
            log.run_id()
        ),
        None => format!(
            "the run waits for an answer to: {question}\nwith the run log off it cannot be \
             resumed"
        ),
    };
    crate::notice::emit(&format!("tasklisp: {how}"));
    Error::exit(WAITING).with_reason(Reason::Other(WAITING_REASON.into()))
}

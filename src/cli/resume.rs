//! `tasklisp resume RUN [ARGS…] [--answer TEXT]`: the command line of the run it
//! resumes, run again in that run's directory with the journal answering the steps it
//! made (see `task::journal`). Flags given to `resume` (before RUN) come after the run's
//! own, so they replace them; ARGS, when given, replace the script's arguments.

use super::args;
use crate::runlog::{self, query, JournalRow};
use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// What a resume takes up: the run, its journal, and the answers `--answer` gives
/// (to `ask-human`, in order).
#[derive(Clone, Debug, Default)]
pub struct Plan {
    pub from: String,
    pub steps: Vec<JournalRow>,
    pub answers: Vec<String>,
}

/// A command line of `resume` becomes the command line of the run it resumes, with its
/// plan; any other comes back as it is. `Err` says why the run cannot be resumed
/// (nothing has run).
pub fn rewrite(argv: Vec<OsString>) -> Result<(Vec<OsString>, Option<Plan>), String> {
    let Some(at) = args::command_position(&argv) else {
        return Ok((argv, None));
    };
    if argv.get(at).is_none_or(|word| word != "resume") {
        return Ok((argv, None));
    }
    // Without a RUN (`resume --help`), clap reads the command line and says so.
    let Some(run_at) = args::positional_after(&argv, at + 1) else {
        return Ok((argv, None));
    };
    let own_flags: Vec<OsString> = argv
        .get(1..at)
        .into_iter()
        .flatten()
        .chain(argv.get(at + 1..run_at).into_iter().flatten())
        .cloned()
        .collect();
    let run = argv.get(run_at).map(|w| w.to_string_lossy().into_owned());
    let (answers, script_args) = answers_and_args(argv.get(run_at + 1..).unwrap_or_default());
    let source = find(run.as_deref().unwrap_or_default())?;
    let (old_argv, cwd) = command_line(&source)?;
    std::env::set_current_dir(&cwd).map_err(|e| {
        format!(
            "cannot enter {}, where run {} ran: {e}",
            cwd.display(),
            source.id
        )
    })?;
    let program = argv.first().cloned().unwrap_or_else(|| "tasklisp".into());
    let old: Vec<OsString> = std::iter::once(program)
        .chain(old_argv.into_iter().map(OsString::from))
        .collect();
    let (mut head, old_args) = args::split_script_args(old);
    // `head` ends with the script: this resume's flags go just before it.
    let file = head.pop().unwrap_or_default();
    head.extend(own_flags);
    head.push(file);
    let script_args = if script_args.is_empty() {
        old_args
    } else {
        script_args
    };
    head.extend(script_args.into_iter().map(OsString::from));
    let steps = journal(&source)?;
    let plan = Plan {
        from: source.id,
        steps,
        answers,
    };
    Ok((head, Some(plan)))
}

/// The words after RUN: `--answer TEXT` (or `--answer=TEXT`), and the script's
/// arguments.
fn answers_and_args(words: &[OsString]) -> (Vec<String>, Vec<String>) {
    let mut answers = Vec::new();
    let mut script_args = Vec::new();
    let mut words = words.iter().map(|w| w.to_string_lossy().into_owned());
    while let Some(word) = words.next() {
        if word == "--answer" {
            answers.extend(words.next());
        } else if let Some(answer) = word.strip_prefix("--answer=") {
            answers.push(answer.to_owned());
        } else {
            script_args.push(word);
        }
    }
    (answers, script_args)
}

/// The log's database, where `tasklisp resume` finds runs.
fn log_path() -> Result<PathBuf, String> {
    runlog::location(&super::log::env_var)
        .ok_or_else(|| "the run log is off (TASKLISP_LOG=off): there is no run to resume".into())
}

/// The run `id` names, if it can be resumed.
fn find(id: &str) -> Result<query::ResumeSource, String> {
    let path = log_path()?;
    let conn = query::open(&path)?.ok_or_else(|| format!("no run `{id}` in the log"))?;
    let id = query::find_run(&conn, id)?;
    let source = query::resume_source(&conn, &id).map_err(|e| e.to_string())?;
    resumable(source)
}

/// The run, or why it cannot be resumed.
fn resumable(source: query::ResumeSource) -> Result<query::ResumeSource, String> {
    let id = &source.id;
    if source.command != "run" {
        return Err(format!(
            "run {id} was `tasklisp {}`, not a script's run: only runs of `tasklisp run` \
             can be resumed",
            source.command
        ));
    }
    if source.journal.is_none() || source.argv.is_none() {
        return Err(format!(
            "run {id} was recorded by an older tasklisp, which kept no journal: it cannot \
             be resumed"
        ));
    }
    if source.script == "-" {
        return Err(format!(
            "run {id} read its script from standard input, which is gone: it cannot be \
             resumed"
        ));
    }
    if let Some(by) = &source.resumed_by {
        return Err(format!(
            "run {id} was resumed already, by run {by}: resume that one instead"
        ));
    }
    match source.status.as_str() {
        "ok" => Err(format!("run {id} ended well: there is nothing to resume")),
        "running" => Err(format!(
            "run {id} is still running: it can be resumed once it has stopped"
        )),
        _ => Ok(source),
    }
}

/// The run's command line and directory.
fn command_line(source: &query::ResumeSource) -> Result<(Vec<String>, PathBuf), String> {
    let damaged = || format!("run {} has a damaged command line in the log", source.id);
    let argv: Vec<String> = source
        .argv
        .as_deref()
        .and_then(|text| serde_json::from_str(text).ok())
        .ok_or_else(damaged)?;
    let cwd = source.cwd.as_deref().map(Path::new).ok_or_else(damaged)?;
    Ok((argv, cwd.to_owned()))
}

fn journal(source: &query::ResumeSource) -> Result<Vec<JournalRow>, String> {
    let conn = query::open(&log_path()?)?.ok_or("the run log is gone")?;
    query::journal(&conn, &source.id)
        .map_err(|e| format!("the journal of run {} cannot be read: {e}", source.id))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_are_taken_from_the_words_after_the_run() {
        let words: Vec<OsString> = ["a", "--answer", "yes", "b", "--answer=no"]
            .into_iter()
            .map(OsString::from)
            .collect();
        let (answers, args) = answers_and_args(&words);
        assert_eq!(answers, ["yes", "no"]);
        assert_eq!(args, ["a", "b"]);
    }
}

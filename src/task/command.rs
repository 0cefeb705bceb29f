//! Script tasks: evaluate `:command`, `:stdin` and `:env` in the call's environment, run
//! the program, and turn its output into a TaskResult.

use super::answer::{parse_output, Answer};
use super::definition::{ScriptParts, Task};
use super::journal;
use super::result::task_result;
use super::script::run_script;
use crate::error::{Error, Reason, Result};
use crate::eval::env::Env;
use crate::eval::fiber::run_blocking;
use crate::eval::Interp;
use crate::interrupt::Cancel;
use crate::process::{Confinement, ProcessOutput, ProcessSpec, DEFAULT_MAX_OUTPUT};
use crate::value::{display_string, write_string, Entries, Value};
use serde_json::{json, Value as Json};
use std::rc::Rc;

pub fn run(interp: &Interp, task: &Task, parts: &ScriptParts, frame: &Env) -> Result<Value> {
    let command = interp.eval(&parts.code.command, frame)?;
    let argv = argv(&command)?;
    let program = match argv.first() {
        Some(first) if !parts.shell => first.as_str(),
        _ => "sh",
    };
    let executable = interp.limits.capabilities.exec_program(program)?;
    let stdin = match &parts.code.stdin {
        Some(node) => match interp.eval(node, frame)? {
            Value::Nil => None,
            value => Some(display_string(&value).into_bytes()),
        },
        None => None,
    };
    let env = match &parts.code.env {
        Some(node) => environment(&interp.eval(node, frame)?)?,
        None => Vec::new(),
    };
    let spec = ProcessSpec {
        stdin,
        env,
        shell: parts.shell,
        timeout: parts.timeout,
        max_output: DEFAULT_MAX_OUTPUT,
        executable,
        confine: Confinement::of(&interp.limits.capabilities),
        ..ProcessSpec::new(argv)
    };
    let cancel = Cancel {
        flag: interp.interrupt_flag(),
        deadline: None,
    };
    // What the program printed so far is shown before a wait that may be long.
    interp.flush();
    let argv = spec.argv.clone();
    // The environment's names only: its values may be keys, kept out of the log.
    let env_names: Vec<&str> = spec.env.iter().map(|(name, _)| name.as_str()).collect();
    let request = json!({"argv": spec.argv, "shell": spec.shell,
        "stdin": spec.stdin.as_deref().map(String::from_utf8_lossy), "env": env_names});
    let output = journal::journaled(interp, "script", &request, || {
        run_blocking(interp, move || run_script(&spec, &cancel)).map(|out| output_json(&out))
    })?;
    let output = output_from_json(&output);
    interp.check_interrupt()?;
    if output.exit_code != 0 {
        return Err(failure(task, &argv, &output));
    }
    let mut notes = Entries::new();
    notes.insert(Rc::from("stdout"), Value::from(output.stdout.as_str()));
    notes.insert(Rc::from("stderr"), Value::from(output.stderr.as_str()));
    notes.insert(
        Rc::from("exitCode"),
        Value::Int(i64::from(output.exit_code)),
    );
    if output.stdout_truncated || output.stderr_truncated {
        notes.insert(Rc::from("truncated"), Value::Bool(true));
    }
    let answer = Answer {
        content: &output.stdout,
        provider: None,
        model: None,
        round: 1,
    };
    let parsed = parse_output(task, &answer, &mut notes)?;
    Ok(task_result(&task.name, output.stdout, parsed, notes))
}

/// A script's output as the journal keeps it.
fn output_json(output: &ProcessOutput) -> Json {
    json!({
        "stdout": output.stdout,
        "stderr": output.stderr,
        "exit_code": output.exit_code,
        "stdout_truncated": output.stdout_truncated,
        "stderr_truncated": output.stderr_truncated,
    })
}

/// The output [`output_json`] wrote (a field missing reads as empty).
fn output_from_json(output: &Json) -> ProcessOutput {
    let text = |name: &str| output[name].as_str().unwrap_or_default().to_owned();
    let flag = |name: &str| output[name].as_bool().unwrap_or_default();
    ProcessOutput {
        stdout: text("stdout"),
        stderr: text("stderr"),
        exit_code: output["exit_code"]
            .as_i64()
            .and_then(|code| i32::try_from(code).ok())
            .unwrap_or(-1),
        stdout_truncated: flag("stdout_truncated"),
        stderr_truncated: flag("stderr_truncated"),
    }
}

/// The program and its arguments (never empty). With `:shell true` the first word is the
/// shell script and the others its positional parameters `$1`…: arguments are never
/// spliced into the script's text, so they cannot inject commands.
fn argv(command: &Value) -> Result<Vec<String>> {
    let words: Vec<String> = match command {
        Value::Str(s) => vec![s.to_string()],
        Value::List(..) => command
            .as_list()
            .unwrap_or_default()
            .iter()
            .map(|v| display_string(&v))
            .collect(),
        other => {
            return Err(Error::task_failure(
                Reason::InputValidationFailure,
                format!(
                    ":command must be a list of arguments or a string, not {}",
                    write_string(other)
                ),
            ))
        }
    };
    if words.is_empty() {
        return Err(Error::task_failure(
            Reason::InputValidationFailure,
            ":command is empty",
        ));
    }
    Ok(words)
}

/// `:env {"NAME" value}` as pairs of strings.
fn environment(value: &Value) -> Result<Vec<(String, String)>> {
    match value {
        Value::Nil => Ok(Vec::new()),
        Value::Map(map) => Ok(map
            .entries
            .iter()
            .map(|(k, v)| (k.to_string(), display_string(v)))
            .collect()),
        other => Err(Error::task_failure(
            Reason::InputValidationFailure,
            format!(
                ":env must be a map of names to values, not {}",
                write_string(other)
            ),
        )),
    }
}

fn failure(task: &Task, argv: &[String], output: &ProcessOutput) -> Error {
    let program = argv.first().map_or("", String::as_str);
    let mut message = format!(
        "task `{}`: {program} exited with status {}",
        task.name, output.exit_code
    );
    if let Some(line) = output.stderr.lines().find(|l| !l.trim().is_empty()) {
        message.push_str(": ");
        message.push_str(&crate::value::truncate_text(line.trim(), 200));
    }
    Error::task_failure(Reason::ToolExecutionError, message).with_details(json!({
        "script_stdout": output.stdout,
        "script_stderr": output.stderr,
        "script_exit_code": output.exit_code,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn argv_from_lists_and_strings() {
        let list = Value::list(vec![Value::from("wc"), Value::from("-l"), Value::Int(3)]);
        assert_eq!(argv(&list).unwrap(), ["wc", "-l", "3"]);
        assert_eq!(argv(&Value::from("ls")).unwrap(), ["ls"]);
        assert!(argv(&Value::empty_list()).is_err());
        assert!(argv(&Value::Int(1)).is_err());
    }
}

//! The `command` provider: a local program answers. The prompt goes to its stdin (or,
//! with `"input" "request"`, the whole request as JSON) and its stdout is the content.
//! It runs through [`crate::process`], like script tasks: its own process group (a
//! timeout or Ctrl-C ends it and everything it started), death with the interpreter,
//! capped output, a short drain after it exits.

use super::http::{check_cancel, excerpt, EXCERPT_BYTES};
use super::message::tool_call_from_json;
use super::{Provider, Request, Response, ToolCall};
use crate::error::{Error, Reason, Result};
use crate::interrupt::Cancel;
use crate::process::{Confinement, ProcessSpec, StopReason, Stopped, UNCONFINED_MESSAGE};
use serde_json::json;
use std::time::Duration;

/// Standard output beyond this is refused: the program is ended and the call fails.
const MAX_STDOUT: usize = 16 * 1024 * 1024;

/// What to run.
#[derive(Clone, Debug, PartialEq)]
pub enum Program {
    /// A program and its arguments, run directly.
    Argv(Vec<String>),
    /// A command line for `sh -c` (pipes and quoting allowed).
    Shell(String),
}

/// What the program reads on stdin.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Input {
    Prompt,
    /// The request map of SPEC §9 as one JSON object, with `json_mode`.
    Request,
}

pub struct CommandProvider {
    program: Program,
    input: Input,
    timeout: Duration,
    /// The model when the task names none, passed as `TASKLISP_MODEL`.
    model: Option<String>,
}

impl CommandProvider {
    pub fn new(
        program: Program,
        input: Input,
        timeout: Duration,
        model: Option<String>,
    ) -> Result<CommandProvider> {
        if matches!(&program, Program::Argv(argv) if argv.is_empty()) {
            return Err(Error::validation(
                "the command provider needs a program to run",
            ));
        }
        Ok(CommandProvider {
            program,
            input,
            timeout,
            model,
        })
    }

    /// How the program is named in errors.
    fn label(&self) -> String {
        let text = match &self.program {
            Program::Argv(argv) => argv.join(" "),
            Program::Shell(line) => line.clone(),
        };
        excerpt(&text, 200)
    }

    /// The run of the program for `request`, its input `input`.
    fn spec(&self, request: &Request, input: Vec<u8>) -> ProcessSpec {
        let (argv, shell) = match &self.program {
            Program::Argv(argv) => (argv.clone(), false),
            Program::Shell(line) => (vec![line.clone()], true),
        };
        let mut env = vec![
            ("TASKLISP_TASK".to_owned(), request.task.clone()),
            (
                "TASKLISP_OPTIONS".to_owned(),
                request.options.to_json().to_string(),
            ),
        ];
        let mut env_remove = Vec::new();
        match request.model.as_ref().or(self.model.as_ref()) {
            Some(model) => env.push(("TASKLISP_MODEL".to_owned(), model.clone())),
            None => env_remove.push("TASKLISP_MODEL".to_owned()),
        }
        ProcessSpec {
            stdin: Some(input),
            env,
            env_remove,
            shell,
            timeout: Some(self.timeout),
            max_output: MAX_STDOUT,
            stop_at_cap: true,
            confine: Confinement::of_process(),
            ..ProcessSpec::new(argv)
        }
    }

    fn failure(&self, message: String) -> Error {
        Error::task_failure(Reason::LlmError, format!("command: {message}"))
    }
}

impl Provider for CommandProvider {
    fn name(&self) -> &str {
        "command"
    }

    fn complete(&self, request: &Request, cancel: &Cancel) -> Result<Response> {
        let input = match self.input {
            Input::Prompt => request.prompt.clone().into_bytes(),
            Input::Request => request.to_json_with_mode().to_string().into_bytes(),
        };
        match crate::process::run(&self.spec(request, input), cancel) {
            Ok(output) if output.exit_code == 0 => Ok(match self.input {
                Input::Request => answer_with_tool_calls(output.stdout),
                Input::Prompt => Response {
                    content: output.stdout,
                    ..Response::default()
                },
            }),
            Ok(output) => Err(self
                .failure(format!(
                    "`{}` failed with exit status {}",
                    self.label(),
                    output.exit_code
                ))
                .with_details(json!({
                    "exit_code": output.exit_code,
                    "stderr": excerpt(&output.stderr, EXCERPT_BYTES),
                }))),
            Err(stopped) => Err(self.stopped(stopped, cancel)),
        }
    }
}

/// A program that reads the whole request may answer with a map: it asks for tools by
/// printing `{"tool_calls": [{"id" …, "name" …, "arguments" {…}}], "content": …}`, and
/// says why it stopped with `{"content": …, "finish_reason": "length"}`. Any other
/// output is the answer as it is.
fn answer_with_tool_calls(stdout: String) -> Response {
    let structured = serde_json::from_str::<serde_json::Value>(&stdout)
        .ok()
        .and_then(|answer| {
            let finish_reason = answer
                .get("finish_reason")
                .and_then(|r| r.as_str())
                .map(str::to_owned);
            let content = answer.get("content").and_then(|c| c.as_str());
            let tool_calls: Vec<ToolCall> = match answer.get("tool_calls") {
                Some(calls) => calls
                    .as_array()?
                    .iter()
                    .map(tool_call_from_json)
                    .collect::<std::result::Result<_, _>>()
                    .ok()?,
                None => {
                    // Without tool calls, only a map naming both is an answer map.
                    finish_reason.as_ref()?;
                    content?;
                    Vec::new()
                }
            };
            Some(Response {
                content: content.unwrap_or("").to_owned(),
                tool_calls,
                finish_reason,
                ..Response::default()
            })
        });
    structured.unwrap_or(Response {
        content: stdout,
        ..Response::default()
    })
}

impl CommandProvider {
    /// The error for a run that did not finish on its own: the caller's cancellation
    /// or deadline as such, a program that could not be confined a
    /// `tool_execution_error`, anything else an `llm_error`.
    fn stopped(&self, Stopped { why, output }: Stopped, cancel: &Cancel) -> Error {
        let label = self.label();
        let message = match why {
            StopReason::Cancelled | StopReason::DeadlinePassed => {
                if let Err(error) = check_cancel(cancel) {
                    return error;
                }
                format!("`{label}` was stopped")
            }
            StopReason::NotStarted(os_error) => format!("cannot run `{label}`: {os_error}"),
            StopReason::TimedOut(limit) => format!(
                "`{label}` did not finish within {:.3}s",
                limit.as_secs_f64()
            ),
            StopReason::OutputOverflow => format!("`{label}` wrote more than {MAX_STDOUT} bytes"),
            StopReason::Failed(message) => format!("cannot wait for `{label}`: {message}"),
            StopReason::Unconfined(why) => {
                let message = format!("{UNCONFINED_MESSAGE}: {why}");
                return Error::task_failure(Reason::ToolExecutionError, message);
            }
        };
        self.failure(message)
            .with_detail("stderr", json!(excerpt(&output.stderr, EXCERPT_BYTES)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(
        program: Program,
        input: Input,
        timeout: Duration,
        request: &Request,
    ) -> Result<Response> {
        CommandProvider::new(program, input, timeout, Some("m0".into()))
            .unwrap()
            .complete(request, &Cancel::default())
    }

    fn shell(line: &str) -> Program {
        Program::Shell(line.into())
    }

    fn prompt(text: &str) -> Request {
        Request {
            task: "t1".into(),
            prompt: text.into(),
            messages: vec![crate::provider::Message::user(text)],
            ..Request::default()
        }
    }

    #[test]
    fn the_prompt_goes_in_and_stdout_comes_back() {
        let argv = Program::Argv(vec!["tr".into(), "a-z".into(), "A-Z".into()]);
        let response = run(
            argv,
            Input::Prompt,
            Duration::from_secs(10),
            &prompt("hello"),
        )
        .unwrap();
        assert_eq!(response.content, "HELLO");
        assert_eq!(response.usage, None);
    }

    #[test]
    fn the_task_and_model_are_in_the_environment() {
        let line = shell("printf '%s/%s' \"$TASKLISP_TASK\" \"$TASKLISP_MODEL\"");
        let response = run(line, Input::Prompt, Duration::from_secs(10), &prompt("")).unwrap();
        assert_eq!(response.content, "t1/m0");
    }

    #[test]
    fn request_input_is_the_request_as_json() {
        let request = Request {
            json_mode: true,
            ..prompt("p")
        };
        let response = run(
            shell("cat"),
            Input::Request,
            Duration::from_secs(10),
            &request,
        )
        .unwrap();
        let sent: serde_json::Value = serde_json::from_str(&response.content).unwrap();
        assert_eq!(sent["prompt"], "p");
        assert_eq!(sent["task"], "t1");
        assert_eq!(sent["json_mode"], true);
        assert_eq!(sent["messages"], json!([{"role": "user", "content": "p"}]));
    }

    #[test]
    fn a_request_reader_may_answer_with_tool_calls() {
        let answer = answer_with_tool_calls(
            r#"{"tool_calls": [{"id": "1", "name": "add", "arguments": {"a": 1}}]}"#.into(),
        );
        assert_eq!(answer.tool_calls[0].name, "add");
        assert_eq!(answer.content, "");
        let plain = answer_with_tool_calls(r#"{"tool_calls": "no"}"#.into());
        assert!(plain.tool_calls.is_empty());
        assert_eq!(plain.content, r#"{"tool_calls": "no"}"#);
    }

    #[test]
    fn a_failing_program_is_an_llm_error_with_its_stderr() {
        let error = run(
            shell("echo oops >&2; exit 3"),
            Input::Prompt,
            Duration::from_secs(10),
            &prompt(""),
        )
        .unwrap_err();
        assert_eq!(error.reason(), Some("llm_error"));
        assert_eq!(error.details()["exit_code"], 3);
        assert_eq!(error.details()["stderr"], "oops\n");
    }

    #[test]
    fn a_slow_program_and_its_children_are_ended_at_the_timeout() {
        let dir = tempfile::tempdir().unwrap();
        let finished = dir.path().join("slow-finished");
        let line = shell(&format!(
            "{{ sleep 30; touch {}; }} | cat",
            finished.display()
        ));
        let error = run(line, Input::Prompt, Duration::from_millis(200), &prompt("")).unwrap_err();
        assert!(
            error.message().contains("did not finish"),
            "{}",
            error.message()
        );
        // Uncancelled, the program would have finished (and touched the file) first.
        assert!(!finished.exists(), "the call waited for the program");
    }

    #[test]
    fn a_process_that_escapes_the_group_cannot_hold_the_call() {
        let dir = tempfile::tempdir().unwrap();
        let finished = dir.path().join("escaped-finished");
        let line = shell(&format!(
            "printf answer; setsid sh -c 'sleep 8; touch {}' &",
            finished.display()
        ));
        let response = run(line, Input::Prompt, Duration::from_secs(10), &prompt("")).unwrap();
        assert_eq!(response.content, "answer");
        assert!(
            !finished.exists(),
            "the call waited for the escaped process"
        );
    }

    #[test]
    fn endless_output_is_cut_off() {
        let error = run(
            shell("yes"),
            Input::Prompt,
            Duration::from_secs(30),
            &prompt(""),
        )
        .unwrap_err();
        assert!(error.message().contains("more than"), "{}", error.message());
    }

    #[test]
    fn a_missing_program_is_an_llm_error() {
        let argv = Program::Argv(vec!["/nonexistent/tasklisp-provider".into()]);
        let error = run(argv, Input::Prompt, Duration::from_secs(1), &prompt("")).unwrap_err();
        assert!(error.message().contains("cannot run"));
        assert!(CommandProvider::new(
            Program::Argv(vec![]),
            Input::Prompt,
            Duration::from_secs(1),
            None
        )
        .is_err());
    }
}
